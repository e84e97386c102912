package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/cmd/agentbot/datadir"
	"agentbot/storage/bolt"
)

// dataDirOf parses the serve command with vars as its environment and
// args as its flags, and returns the data folder it picked.
func dataDirOf(t *testing.T, vars map[string]string, args ...string) *Config {
	t.Helper()
	var stderr bytes.Buffer
	cfg, _, code := parse("serve", &env{args: args, stderr: &stderr, getenv: func(k string) string { return vars[k] }}, nil)
	if cfg == nil || code != 0 {
		t.Fatalf("parse: exit %d: %s", code, stderr.String())
	}
	return cfg
}

// Without AGENTBOT_DATA the data folder is the user's state folder, never
// ./data of the working directory (inside the BMAD root when a team runs
// agentbot from its repository), unless ./data holds a store already:
// then it is kept, and the start says how to move it.
func TestDataDefault(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	state, home := filepath.Join(t.TempDir(), "state"), filepath.Join(t.TempDir(), "home")
	for _, c := range []struct {
		name   string
		vars   map[string]string
		args   []string
		want   string
		legacy bool
	}{
		{"XDG_STATE_HOME set", map[string]string{"XDG_STATE_HOME": state, "HOME": home}, nil, filepath.Join(state, "agentbot"), false},
		{"XDG_STATE_HOME unset, HOME set", map[string]string{"HOME": home}, nil, filepath.Join(home, ".local", "state", "agentbot"), false},
		{"XDG_STATE_HOME relative: ignored", map[string]string{"XDG_STATE_HOME": "state", "HOME": home}, nil, filepath.Join(home, ".local", "state", "agentbot"), false},
		{"AGENTBOT_DATA wins", map[string]string{"AGENTBOT_DATA": "/srv/agentbot", "HOME": home}, nil, "/srv/agentbot", false},
		{"--data wins", map[string]string{"AGENTBOT_DATA": "/srv/agentbot", "HOME": home}, []string{"--data", "/var/lib/agentbot"}, "/var/lib/agentbot", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := dataDirOf(t, c.vars, c.args...)
			if cfg.DataDir != c.want || cfg.LegacyData != c.legacy {
				t.Fatalf("data folder %q (legacy %v), want %q (legacy %v)", cfg.DataDir, cfg.LegacyData, c.want, c.legacy)
			}
		})
	}

	// A ./data of something else (no store) is not agentbot's.
	if err := os.MkdirAll(filepath.Join(wd, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if cfg := dataDirOf(t, map[string]string{"HOME": home}); cfg.DataDir != filepath.Join(home, ".local", "state", "agentbot") || cfg.LegacyData {
		t.Fatalf("./data without a store: data folder %q (legacy %v)", cfg.DataDir, cfg.LegacyData)
	}

	// A ./data holding a store keeps working, and the start warns.
	st, err := bolt.Open(filepath.Join(wd, "data"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	vars := map[string]string{"XDG_STATE_HOME": state, "HOME": home}
	cfg := dataDirOf(t, vars)
	if cfg.DataDir != "./data" || !cfg.LegacyData {
		t.Fatalf("./data holding agentbot.db: data folder %q (legacy %v)", cfg.DataDir, cfg.LegacyData)
	}
	var logs bytes.Buffer
	datadir.WarnLegacy(slog.New(slog.NewTextHandler(&logs, nil)), cfg.DataDir, cfg.LegacyData, func(k string) string { return vars[k] })
	for _, want := range []string{"level=WARN", "./data", "AGENTBOT_DATA", "mv ./data " + filepath.Join(state, "agentbot"), "data=" + filepath.Join(wd, "data")} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the warning lacks %q:\n%s", want, logs.String())
		}
	}
	if cfg := dataDirOf(t, map[string]string{"AGENTBOT_DATA": state, "HOME": home}); cfg.DataDir != state || cfg.LegacyData {
		t.Fatalf("AGENTBOT_DATA with a legacy ./data: %q (legacy %v)", cfg.DataDir, cfg.LegacyData)
	}
	logs.Reset()
	datadir.WarnLegacy(slog.New(slog.NewTextHandler(&logs, nil)), state, false, func(k string) string { return vars[k] })
	if logs.Len() != 0 {
		t.Errorf("a warning for a chosen data folder: %s", logs.String())
	}
}
