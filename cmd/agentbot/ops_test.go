package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage/bolt"
)

func opsWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metricValue reads one sample from Prometheus text: name{labels} value.
func metricValue(t *testing.T, text, sample string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, sample+" ") {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, sample)), 64)
			if err != nil {
				t.Fatalf("bad sample %q", line)
			}
			return v
		}
	}
	t.Fatalf("no sample %s in /metrics", sample)
	return 0
}

// agentbot serve with AGENTBOT_HTTP_ADDR: /healthz follows the Socket Mode
// connection, /metrics counts a scripted turn, and the log has one line per
// turn without secrets or message contents.
func TestServeHealthMetricsAndTurnLog(t *testing.T) {
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	data := t.TempDir()
	vars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "sk-very-secret", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": data, "AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_HTTP_ADDR": "127.0.0.1:0",
	}
	logs, stop := serveInProcess(t, vars)
	defer stop()
	addrRE := regexp.MustCompile(`serving /healthz and /metrics" addr=(\S+)`)
	var base string
	opsWait(t, "the HTTP listener", func() bool {
		m := addrRE.FindStringSubmatch(logs.String())
		if m != nil {
			base = "http://" + m[1]
		}
		return m != nil
	})
	opsWait(t, "healthz 200", func() bool { code, _ := httpGet(t, base+"/healthz"); return code == 200 })

	// A turn: /agent use, then a mention whose turn retries once, calls
	// tools (one fails), saves a document and answers.
	fs.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "use product-lead", UserID: "U1", ChannelID: "C1", TeamID: fs.TeamID()})
	opsWait(t, "the channel default", func() bool {
		for _, m := range fs.Messages() {
			if m.Kind == fakeslack.KindEphemeral && strings.Contains(m.Text, "default") {
				return true
			}
		}
		return false
	})
	args := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	fm.Enqueue(
		fakemodel.Reply{Status: 500},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			{Name: "read_file", Arguments: args(map[string]string{"path": "config.yaml"})},
			{Name: "read_file", Arguments: args(map[string]string{"path": "no-such-file.md"})},
			{Name: "save_output", Arguments: args(map[string]string{"path": "brief.md", "content": "# Brief\n"})},
		}, Usage: fakemodel.Usage{Prompt: 1000, Cached: 800, Completion: 50}},
		fakemodel.Reply{Text: "Done: the brief is saved.", Usage: fakemodel.Usage{Prompt: 1200, Cached: 1000, Completion: 20}},
	)
	ts := fs.NextTS()
	env := fs.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1", TimeStamp: ts,
		Text: "<@" + fs.BotUserID() + "> my secret plan for world domination"})
	fs.Redeliver(env, "timeout") // a retry: deduped
	opsWait(t, "the answer and the upload", func() bool {
		ss := fs.Streams()
		return len(fs.Uploads()) == 1 && len(ss) == 1 && ss[0].Stopped
	})
	var metricsText string
	opsWait(t, "the turn to be counted", func() bool {
		_, metricsText = httpGet(t, base+"/metrics")
		return strings.Contains(metricsText, `agentbot_turns_finished_total{result="ok"} 1`) &&
			strings.Contains(metricsText, "\nagentbot_queue_depth 0\n") // the thread's worker has finished
	})
	for sample, want := range map[string]float64{
		`agentbot_events_received_total{kind="events_api"}`:                     2,
		`agentbot_events_received_total{kind="slash_commands"}`:                 1,
		`agentbot_events_deduped_total`:                                         1,
		`agentbot_turns_started_total`:                                          1,
		`agentbot_turns_finished_total{result="ok"}`:                            1,
		`agentbot_model_calls_total`:                                            2,
		`agentbot_model_retries_total`:                                          1,
		`agentbot_tool_calls_total{outcome="ok",server="",tool="read_file"}`:    1,
		`agentbot_tool_calls_total{outcome="error",server="",tool="read_file"}`: 1,
		`agentbot_tool_calls_total{outcome="ok",server="",tool="save_output"}`:  1,
		`agentbot_tokens_total{kind="prompt"}`:                                  2200,
		`agentbot_tokens_total{kind="cached"}`:                                  1800,
		`agentbot_tokens_total{kind="completion"}`:                              70,
		`agentbot_turn_duration_seconds_count`:                                  1,
		`agentbot_uploads_total{result="ok"}`:                                   1,
		`agentbot_queue_depth`:                                                  0,
	} {
		if got := metricValue(t, metricsText, sample); got != want {
			t.Errorf("%s = %v, want %v", sample, got, want)
		}
	}
	// One log line per turn with its numbers; no secrets, no message text.
	out := logs.String()
	turnLine := regexp.MustCompile(`msg=turn session=\S+ agent=product-lead iterations=2 tools=3 prompt_tokens=2200 cached_tokens=1800 completion_tokens=70 duration=\S+`)
	if !turnLine.MatchString(out) {
		t.Errorf("no turn log line in:\n%s", out)
	}
	for _, secret := range []string{fs.BotToken(), fs.AppToken(), "sk-very-secret", "world domination", "# Brief"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q", secret)
		}
	}
	// The websocket drops and Slack is gone: /healthz turns 503.
	fs.Close()
	opsWait(t, "healthz 503", func() bool { code, _ := httpGet(t, base+"/healthz"); return code == 503 })
}

// SIGHUP reloads bundles without a restart; a running thread keeps the
// agent definition it started with, a new thread gets the new one.
func TestServeReloadOnSIGHUP(t *testing.T) {
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	bundles := t.TempDir()
	fixtures.CopyDir(t, filepath.Join(bundlesDir(t), "product-team"), filepath.Join(bundles, "product-team"))
	vars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": t.TempDir(), "AGENTBOT_BUNDLES": bundles,
	}
	logs, stop := serveInProcess(t, vars)
	defer stop()
	opsWait(t, "serve to start", func() bool { return strings.Contains(logs.String(), "agentbot starting") && fs.Connected() == 1 })

	fs.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "use product-lead", UserID: "U1", ChannelID: "C1", TeamID: fs.TeamID()})
	opsWait(t, "the default", func() bool { return len(fs.CallsTo("chat.postEphemeral")) == 1 })
	thread := fs.NextTS()
	fs.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1", TimeStamp: thread, Text: "<@" + fs.BotUserID() + ">"})
	greetings := func(th string) []string {
		var out []string
		for _, m := range fs.ThreadMessages("C1", th) {
			if m.Kind != fakeslack.KindUser {
				out = append(out, m.Text+m.MarkdownText())
			}
		}
		return out
	}
	opsWait(t, "the first greeting", func() bool { return len(greetings(thread)) == 1 })

	// Change the bundle on disk, add another, and send SIGHUP.
	agentFile := filepath.Join(bundles, "product-team", "agents", "product-lead.md")
	b, _ := os.ReadFile(agentFile)
	os.WriteFile(agentFile, bytes.ReplaceAll(b, []byte(`name="Maren"`), []byte(`name="Marina"`)), 0o644)
	os.WriteFile(filepath.Join(bundles, "product-team", "bundle.yaml"), bytes.ReplaceAll(mustRead(t, filepath.Join(bundles, "product-team", "bundle.yaml")), []byte("name: Maren"), []byte("name: Marina")), 0o644)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	opsWait(t, "the reload", func() bool { return strings.Contains(logs.String(), "agents reloaded") })

	// The running thread keeps Maren; a new thread meets Marina.
	fs.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1", TimeStamp: fs.NextTS(), ThreadTimeStamp: thread, Text: "<@" + fs.BotUserID() + ">"})
	opsWait(t, "the second greeting", func() bool { return len(greetings(thread)) == 2 })
	if g := greetings(thread)[1]; !strings.Contains(g, "Maren") || strings.Contains(g, "Marina") {
		t.Fatalf("running thread greeting after reload = %q", g)
	}
	fresh := fs.NextTS()
	fs.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1", TimeStamp: fresh, Text: "<@" + fs.BotUserID() + ">"})
	opsWait(t, "the new thread's greeting", func() bool { return len(greetings(fresh)) == 1 })
	if g := greetings(fresh)[0]; !strings.Contains(g, "Marina") {
		t.Fatalf("new thread greeting after reload = %q", g)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// AGENTBOT_SESSION_TTL prunes inactive sessions when serve starts (and
// hourly); active ones stay.
func TestServeRetention(t *testing.T) {
	ctx := context.Background()
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	data := t.TempDir()
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	st.Now = func() time.Time { return time.Now().Add(-48 * time.Hour) }
	old, _ := st.NewSession(ctx, "T/C/old")
	st.Now = time.Now
	fresh, _ := st.NewSession(ctx, "T/C/fresh")
	st.Close()
	vars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": data, "AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_SESSION_TTL": "24h",
	}
	logs, stop := serveInProcess(t, vars)
	opsWait(t, "the prune", func() bool { return strings.Contains(logs.String(), "pruned inactive sessions") })
	stop()
	st, err = bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.SessionByID(ctx, old.ID); err == nil {
		t.Fatal("the inactive session was kept")
	}
	if _, err := st.SessionByID(ctx, fresh.ID); err != nil {
		t.Fatalf("the active session was pruned: %v", err)
	}
}

// serveInProcess runs agentbot serve in-process with vars as its environment;
// stop cancels it and checks that it exits 0 in time.
func serveInProcess(t *testing.T, vars map[string]string) (*syncBuffer, func()) {
	t.Helper()
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &env{args: []string{"serve"}, stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs,
			getenv: func(k string) string { return vars[k] }})
	}()
	var once sync.Once
	return logs, func() {
		once.Do(func() {
			cancel()
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("serve exit %d\n%s", code, logs.String())
				}
			case <-time.After(20 * time.Second):
				t.Error("serve did not stop")
			}
		})
	}
}
