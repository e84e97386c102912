package main

import (
	"strings"
	"testing"
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
		{nil, []string{"--turn-timeout", "15"}, "want a duration with a unit"},
		{nil, []string{"--max-iterations", "-5"}, "--max-iterations ($AGENTBOT_MAX_ITERATIONS) = -5: want a whole number from 1 to 1000"},
		{nil, []string{"--turn-timeout", "-1s"}, "--turn-timeout ($AGENTBOT_TURN_TIMEOUT) = -1s: want a duration above zero"},
		{nil, []string{"--log-level", "verbose"}, `--log-level ($AGENTBOT_LOG_LEVEL) = "verbose": want one of debug, info, warn, error`},
		{map[string]string{"AGENTBOT_LOG_FORMAT": "xml"}, nil, `--log-format ($AGENTBOT_LOG_FORMAT) = "xml"`},
		{nil, []string{"--temperature", "7"}, `--temperature ($AGENTBOT_TEMPERATURE) = "7"`},
		{nil, []string{"--api-type", "anthropic"}, `--api-type ($OPENAI_API_TYPE) = "anthropic"`},
		{map[string]string{"AGENTBOT_MAX_ITERATIONS": "many"}, nil, `$AGENTBOT_MAX_ITERATIONS="many": want a whole number`},
		{map[string]string{"AGENTBOT_NO_STREAMING": "sometimes"}, nil, `$AGENTBOT_NO_STREAMING="sometimes": want true or false`},
		{map[string]string{"AGENTBOT_SESSION_TTL": "-1h"}, nil, "--session-ttl ($AGENTBOT_SESSION_TTL) = -1h0m0s"},
	}
	for _, c := range cases {
		for _, cmd := range []string{"agents", "chat", "serve", "check"} {
			env := map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t), "OPENAI_API_KEY": "k"}
			for k, v := range c.env {
				env[k] = v
			}
			r := runCmd(t, env, "", append([]string{cmd}, c.args...)...)
			if r.code != 2 || !strings.Contains(r.stderr, c.want) {
				t.Errorf("%s %v %v: exit %d, stderr %q; want 2 and %q", cmd, c.env, c.args, r.code, r.stderr, c.want)
			}
		}
	}
	// A flag given on the command line wins over a bad environment value? No:
	// the environment is only read for settings no flag set.
	r := runCmd(t, map[string]string{"AGENTBOT_TURN_TIMEOUT": "15", "AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents", "--turn-timeout", "15m")
	r.wantCode(t, 0)
}

// serve and chat fail at start without an API key for a provider that
// needs one; a custom base URL (a local model) may run without.
func TestMissingAPIKey(t *testing.T) {
	for _, cmd := range [][]string{{"chat", "--agent", "product-lead"}, {"serve"}} {
		r := runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_DATA": t.TempDir(), "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1"}, "", cmd...)
		if r.code != 2 || !strings.Contains(r.stderr, "no API key: set OPENAI_API_KEY") {
			t.Errorf("%v: exit %d, %q", cmd, r.code, r.stderr)
		}
	}
}
