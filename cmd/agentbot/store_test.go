package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage/bolt"
)

// seedStore writes a store with two sessions in data.
func seedStore(t *testing.T, data string) []string {
	ctx := context.Background()
	t.Helper()
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for _, k := range []string{"T/C/one", "T/C/two"} {
		s, err := st.NewSession(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		s.Meta = map[string]string{"pad": strings.Repeat("x", 3000)}
		if err := st.SaveSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	return ids
}

// A damaged or emptied store: sessions, check, chat and serve say so
// plainly, name the file and how to recover, and never panic.
func TestDamagedStoreEverywhere(t *testing.T) {
	for name, damage := range map[string]func(string) error{
		"truncated": func(f string) error { return os.Truncate(f, 20<<10) },
		"emptied":   func(f string) error { return os.Truncate(f, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			seedStore(t, data)
			if err := damage(filepath.Join(data, bolt.DBName)); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{"AGENTBOT_DATA": data, "AGENTBOT_BUNDLES": bundlesDir(t), "OPENAI_API_KEY": "k",
				"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}
			for _, args := range [][]string{{"sessions", "list"}, {"chat", "--agent", "product-lead"}, {"serve"}, {"backup", filepath.Join(t.TempDir(), "b.db")}} {
				r := runCmd(t, vars, "", args...)
				out := r.stdout + r.stderr
				if r.code == 0 || !strings.Contains(out, "is damaged") || !strings.Contains(out, "agentbot backup") || strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
					t.Errorf("%v: exit %d:\n%s", args, r.code, out)
				}
			}
			if st, err := os.Stat(filepath.Join(data, bolt.DBName)); err != nil || (name == "emptied" && st.Size() != 0) {
				t.Errorf("the damaged file was re-initialised: %v", err)
			}
		})
	}
}

// backup copies the store whether or not serve holds it, and sessions
// list and show reach a running serve through its control socket.
func TestBackupAndSessionsWhileServing(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	ids := seedStore(t, data)
	vars := map[string]string{"AGENTBOT_DATA": data}
	offline := filepath.Join(t.TempDir(), "offline.db")
	r := runCmd(t, vars, "", "backup", offline)
	r.wantCode(t, 0)
	contains(t, "backup", r.stdout, "wrote "+offline)
	r = runCmd(t, vars, "", "backup", offline)
	r.wantCode(t, 1)
	contains(t, "second backup", r.stderr, "--force")

	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	svars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": data, "AGENTBOT_BUNDLES": bundlesDir(t),
	}
	logs, stop := serveInProcess(t, svars)
	defer stop()
	opsWait(t, "serve to start", func() bool { return strings.Contains(logs.String(), "agentbot starting") })
	online := filepath.Join(t.TempDir(), "online.db")
	r = runCmd(t, vars, "", "backup", online)
	r.wantCode(t, 0)
	r = runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	contains(t, "sessions list while serving", r.stdout, ids[0])
	contains(t, "sessions list while serving", r.stdout, "T/C/two")
	r = runCmd(t, vars, "", "sessions", "show", ids[1])
	r.wantCode(t, 0)
	contains(t, "sessions show while serving", r.stdout, "T/C/two")
	r = runCmd(t, vars, "", "sessions", "show", "nope")
	r.wantCode(t, 1)
	stop()
	for _, f := range []string{offline, online} {
		st, err := bolt.Open(copyTo(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		list, err := st.ListSessions(ctx)
		st.Close()
		if err != nil || len(list) != 2 {
			t.Fatalf("%s holds %d sessions (%v)", f, len(list), err)
		}
	}
}

// copyTo puts a backup file into a fresh data folder, as a restore would.
func copyTo(t *testing.T, backup string) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, bolt.DBName), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sessions show lists the feedback stored with a session.
func TestSessionsShowFeedback(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(t.TempDir(), "data")
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := st.NewSession(ctx, "T/C/fb")
	s.Meta = map[string]string{bot.MetaFeedback: `[{"ts":"1.2","user":"U1","value":"positive","agent":"product-lead","workflow":"brief","time":"2026-11-22T15:55:00Z"},{"ts":"1.3","user":"U2","value":"negative","agent":"product-lead","time":"2026-11-22T15:56:00Z"}]`}
	if err := st.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	st.Close()
	r := runCmd(t, map[string]string{"AGENTBOT_DATA": data}, "", "sessions", "show", s.ID)
	r.wantCode(t, 0)
	contains(t, "show", r.stdout, "Feedback: positive by U1 on brief, answer 1.2")
	contains(t, "show", r.stdout, "Feedback: negative by U2, answer 1.3")
}
