package main

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/cmd/agentbot/flagargs"
	"agentbot/storage/bolt"
)

func TestServeTokenErrors(t *testing.T) {
	const (
		goodApp = "xapp-1-secret-app-value"
		goodBot = "xoxb-secret-bot-value"
	)
	for _, tc := range []struct {
		name     string
		app, bot string
		want     string
		secret   string // a value that must not be printed
	}{
		{"app token missing", "", goodBot, "SLACK_APP_TOKEN is missing", goodBot},
		{"app token malformed", "xoxb-pasted-bot-token-as-app", goodBot, "SLACK_APP_TOKEN is malformed", "xoxb-pasted-bot-token-as-app"},
		{"bot token missing", goodApp, "", "SLACK_BOT_TOKEN is missing", goodApp},
		{"bot token malformed", goodApp, "xoxp-user-token-secret", "SLACK_BOT_TOKEN is malformed", "xoxp-user-token-secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakeslack.New(t)
			data := filepath.Join(t.TempDir(), "data")
			vars := map[string]string{
				"SLACK_APP_TOKEN":  tc.app,
				"SLACK_BOT_TOKEN":  tc.bot,
				"SLACK_API_URL":    fake.APIURL(),
				"AGENTBOT_DATA":    data,
				"AGENTBOT_BUNDLES": bundlesDir(t),
				"OPENAI_API_KEY":   "sk-secret-model-key",
			}
			r := runCmd(t, vars, "", "serve")
			r.wantCode(t, 2)
			contains(t, "stderr", r.stderr, tc.want)
			contains(t, "stderr", r.stderr, "see docs/slack.md, section 'Setting up the Slack app'")
			for _, secret := range []string{tc.secret, "sk-secret-model-key"} {
				lacks(t, "output", r.stdout+r.stderr, secret)
			}
			// At once: before the data folder or Slack is touched.
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("data folder created before the token check: %v", err)
			}
			if n := len(fake.Calls()); n != 0 {
				t.Errorf("%d Slack calls before the token check", n)
			}
		})
	}
}

func TestServeTokenFlagsOverrideEnv(t *testing.T) {
	vars := map[string]string{"SLACK_APP_TOKEN": "xapp-1-from-env", "SLACK_BOT_TOKEN": "xoxb-from-env"}
	r := runCmd(t, vars, "", "serve", "--slack-bot-token", "not-a-bot-token", "--data", filepath.Join(t.TempDir(), "d"))
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "SLACK_BOT_TOKEN is malformed")
	lacks(t, "stderr", r.stderr, "not-a-bot-token")
}

// A second process on the same data folder fails fast instead of hanging.
func TestDataDirInUseFailsFast(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	st, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	vars := map[string]string{"AGENTBOT_DATA": dir, "AGENTBOT_BUNDLES": bundlesDir(t), "OPENAI_API_KEY": "k"}
	for _, args := range [][]string{{"sessions", "list"}, {"chat", "--agent", "product-lead"}} {
		start := time.Now()
		r := runCmd(t, vars, "hello\n", args...)
		took := time.Since(start)
		r.wantCode(t, 1)
		contains(t, strings.Join(args, " "), r.stderr, "in use by another agentbot process")
		contains(t, strings.Join(args, " "), r.stderr, dir)
		if took > 5*time.Second {
			t.Errorf("%v took %s to give up on a locked data folder", args, took)
		}
	}
	// Once released, the folder opens again.
	st.Close()
	r := runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
}

func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args, pos []string
		o         string
	}{
		{[]string{"export", "ID", "-o", "f"}, []string{"export", "ID"}, "f"},
		{[]string{"-o", "f", "export", "ID"}, []string{"export", "ID"}, "f"},
		{[]string{"export", "-o=f", "ID"}, []string{"export", "ID"}, "f"},
		{[]string{"show", "--", "-o", "x"}, []string{"show", "-o", "x"}, ""},
		{nil, nil, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		o := fs.String("o", "", "")
		pos, err := flagargs.Parse(fs, tc.args)
		if err != nil || !slices.Equal(pos, tc.pos) || *o != tc.o {
			t.Errorf("%q: pos %q o %q err %v; want %q o %q", tc.args, pos, *o, err, tc.pos, tc.o)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	if _, err := flagargs.Parse(fs, []string{"list", "--nope"}); err == nil {
		t.Error("an unknown flag after an argument is not an error")
	}
}
