package main

import (
	"strings"
	"testing"
	"time"

	"agentbot/engine/fakemodel"
)

// A setting that does not parse or is out of range is an error naming the
// setting, its value and the expected form, with exit 2, whether it comes
// from a flag or the environment; nothing falls back to a default.
func TestStrictSettings(t *testing.T) {
	cases := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{map[string]string{"AGENTBOT_TURN_TIMEOUT": "15"}, nil, `$AGENTBOT_TURN_TIMEOUT="15": want a duration with a unit`},
		{nil, []string{"--turn-timeout", "15"}, "--turn-timeout=15: want a duration with a unit"},
		{nil, []string{"--max-iterations", "-5"}, "--max-iterations=-5: want a whole number from 1 to 1000"},
		{map[string]string{"AGENTBOT_MAX_ITERATIONS": "0"}, nil, `$AGENTBOT_MAX_ITERATIONS="0": want a whole number from 1 to 1000`},
		{nil, []string{"--turn-timeout", "-1s"}, "--turn-timeout=-1s: want a duration above zero"},
		{map[string]string{"AGENTBOT_CALL_TIMEOUT": "0s"}, nil, `$AGENTBOT_CALL_TIMEOUT="0s": want a duration above zero`},
		{nil, []string{"--log-level", "verbose"}, "--log-level=verbose: want one of debug, info, warn, error"},
		{map[string]string{"AGENTBOT_LOG_FORMAT": "xml"}, nil, `$AGENTBOT_LOG_FORMAT="xml": want one of text, json`},
		{nil, []string{"--temperature", "7"}, "--temperature=7: want empty (the provider's default) or a number from 0 to 2"},
		{nil, []string{"--api-type", "anthropic"}, "--api-type=anthropic: want one of openai, azure, azure_ad"},
		{map[string]string{"OPENAI_API_TYPE": "anthropic"}, nil, `$OPENAI_API_TYPE="anthropic": want one of openai, azure, azure_ad`},
		{map[string]string{"AGENTBOT_MAX_ITERATIONS": "many"}, nil, `$AGENTBOT_MAX_ITERATIONS="many": want a whole number`},
		{map[string]string{"AGENTBOT_NO_STREAMING": "sometimes"}, nil, `$AGENTBOT_NO_STREAMING="sometimes": want true or false`},
		{nil, []string{"--no-streaming=sometimes"}, `--no-streaming=sometimes: want true or false`},
		{map[string]string{"AGENTBOT_SESSION_TTL": "-1h"}, nil, `$AGENTBOT_SESSION_TTL="-1h": want 0 (keep forever) or a duration above zero`},
		{map[string]string{"AGENTBOT_MAX_FILE_BYTES": "0"}, nil, `$AGENTBOT_MAX_FILE_BYTES="0": want a whole number from 1 to`},
		{nil, []string{"--max-upload-bytes", "lots"}, `--max-upload-bytes=lots: want a number of bytes`},
	}
	for _, c := range cases {
		tried := 0
		for _, cmd := range []string{"agents", "chat", "serve", "check"} {
			if !commandUses(t, cmd, c.want) {
				continue // a setting the command does not take (TestSubcommandHelp)
			}
			tried++
			env := map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t), "OPENAI_API_KEY": "k"}
			for k, v := range c.env {
				env[k] = v
			}
			r := runCmd(t, env, "", append([]string{cmd}, c.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, "agentbot "+cmd+": "+c.want) {
				t.Errorf("%s %v %v: exit %d, stderr %q; want 2 and %q", cmd, c.env, c.args, r.code, r.stderr, c.want)
			}
			if strings.Contains(r.stderr, "Usage of") || strings.Count(r.stderr, "\n") > 2 {
				t.Errorf("%s %v %v: a bad setting prints more than its error:\n%s", cmd, c.env, c.args, r.stderr)
			}
		}
		if tried == 0 {
			t.Errorf("no command takes the setting of %q", c.want)
		}
	}
	// The environment is only read for settings no flag set: a flag
	// overrides a bad environment value.
	r := runCmd(t, map[string]string{"AGENTBOT_SESSION_TTL": "-1h", "AGENTBOT_DATA": t.TempDir()}, "", "sessions", "list", "--session-ttl", "1h")
	r.wantCode(t, 0)
	// A command reads only its own settings: a bad value of another
	// command's setting is not its business.
	r = runCmd(t, map[string]string{"AGENTBOT_TURN_TIMEOUT": "15", "AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents")
	r.wantCode(t, 0)

	// Every bad setting is named at once, one line each; a secret's value
	// is never shown.
	r = runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_LOG_LEVEL": "loud", "AGENTBOT_TURN_TIMEOUT": "15"}, "",
		"chat", "--max-iterations", "0", "--context-tokens", "10")
	r.wantCode(t, 2)
	for _, want := range []string{
		"agentbot chat: --max-iterations=0: want a whole number from 1 to 1000\n",
		"agentbot chat: --context-tokens=10: want a whole number from 2000 to 10000000\n",
		"agentbot chat: $AGENTBOT_TURN_TIMEOUT=\"15\": want a duration with a unit, such as 90s, 15m or 2h\n",
		"agentbot chat: $AGENTBOT_LOG_LEVEL=\"loud\": want one of debug, info, warn, error\n",
	} {
		contains(t, "stderr", r.stderr, want)
	}
	r = runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents", "--bundles")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "agentbot agents: flag needs an argument: -bundles\n(agentbot agents -h lists its flags)")
}

// commandUses reports whether the command takes the setting an expected
// message names ("--turn-timeout=..." or "$AGENTBOT_TURN_TIMEOUT=...").
func commandUses(t *testing.T, cmd, want string) bool {
	t.Helper()
	c, ok := findCommand(cmd)
	if !ok {
		t.Fatalf("no command %s", cmd)
	}
	name, _, _ := strings.Cut(want, "=")
	for _, s := range settingsOf(c.groups) {
		if name == "--"+s.flag || name == "$"+s.env {
			return true
		}
	}
	return false
}

// The built-in defaults pass the same checks as the values people set.
func TestDefaultSettingsAreValid(t *testing.T) {
	cfg, _, code := parse("serve", &env{stderr: &strings.Builder{}, getenv: func(string) string { return "" }}, nil)
	if code != 0 || cfg == nil {
		t.Fatalf("the defaults do not parse: exit %d", code)
	}
	for _, ch := range checks {
		if v, want, bad := ch.Bad(cfg); bad {
			t.Errorf("default --%s=%s: want %s", ch.Flag, v, want)
		}
	}
	if cfg.TurnTimeout != 15*time.Minute || cfg.MaxIterations != 50 || cfg.LogLevel != "info" {
		t.Errorf("defaults: %+v", cfg)
	}
}

// serve and chat fail at start without an API key for a provider that
// needs one; a custom base URL (a local model) may run without.
func TestMissingAPIKey(t *testing.T) {
	for _, cmd := range [][]string{{"chat", "--agent", "product-lead"}, {"serve"}} {
		r := runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_DATA": t.TempDir(), "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}, "", cmd...)
		if r.code != 2 || !strings.Contains(r.stderr, "OPENAI_API_KEY is missing: set it (or --api-key) to your OpenAI API key") {
			t.Errorf("%v: exit %d, %q", cmd, r.code, r.stderr)
		}
	}
}

// A custom base URL (a local model) runs without an API key; Azure, whose
// base URL is always its own, does not.
func TestAPIKeyOptionalForACustomBaseURL(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	delete(vars, "OPENAI_API_KEY")
	fm.Enqueue(fakemodel.Reply{Text: "Hello from a local model."})
	r := runCmd(t, vars, "hi\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "Hello from a local model.")
	r = runCmd(t, vars, "hi\n", "chat", "--agent", "product-lead", "--api-type", "azure")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "OPENAI_API_KEY is missing: set it (or --api-key) to your Azure OpenAI API key")
}
