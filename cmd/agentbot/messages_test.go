package main

import (
	"path/filepath"
	"testing"

	"agentbot/bot/fakeslack"
)

// The mistakes of a first hour, each with its message, its hint and its
// exit code: placeholders copied from the README, every missing secret at
// once, a base URL without its scheme, and an agent that is not there (with
// the catalog's problems, for every command that needs an agent).
func TestFirstHourMessages(t *testing.T) {
	fake := fakeslack.New(t)
	notBMAD := t.TempDir()
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		code int
		want []string // lines or parts of stderr, each required
		not  []string // never in stdout or stderr
	}{
		{"README's placeholders", map[string]string{"SLACK_APP_TOKEN": "xapp-…", "SLACK_BOT_TOKEN": "xoxb-…", "OPENAI_API_KEY": "sk-…"},
			[]string{"serve"}, 2, []string{
				"agentbot serve: SLACK_APP_TOKEN is a placeholder (copied from an example, such as xapp-…): set it to an app-level token",
				"agentbot serve: SLACK_BOT_TOKEN is a placeholder (copied from an example, such as xoxb-…): set it to the Bot User OAuth Token",
				"agentbot serve: OPENAI_API_KEY is a placeholder (copied from an example, such as sk-…): set it to your model provider's API key",
				"see docs/slack.md, section 'Setting up the Slack app'", "see docs/configuration.md, section 'Model providers'"}, nil},
		{"ASCII placeholders", map[string]string{"SLACK_APP_TOKEN": "xapp-...", "SLACK_BOT_TOKEN": "xoxb-your-token", "OPENAI_API_KEY": "<your key>"},
			[]string{"serve"}, 2, []string{"SLACK_APP_TOKEN is a placeholder", "SLACK_BOT_TOKEN is a placeholder", "OPENAI_API_KEY is a placeholder"},
			[]string{"xoxb-your-token", "<your key>"}},
		{"nothing set: every secret named at once", nil,
			[]string{"serve"}, 2, []string{
				"agentbot serve: SLACK_APP_TOKEN is missing: set it to",
				"agentbot serve: SLACK_BOT_TOKEN is missing: set it to",
				"agentbot serve: OPENAI_API_KEY is missing: set it (or --api-key) to your OpenAI API key"}, nil},
		{"one missing, one malformed", map[string]string{"SLACK_BOT_TOKEN": "xoxp-user-token-secret", "OPENAI_API_KEY": "sk-real"},
			[]string{"serve"}, 2, []string{"SLACK_APP_TOKEN is missing", "SLACK_BOT_TOKEN is malformed"},
			[]string{"xoxp-user-token-secret", "OPENAI_API_KEY"}},
		{"chat with a placeholder key", map[string]string{"OPENAI_API_KEY": "sk-…"},
			[]string{"chat", "--agent", "product-lead"}, 2, []string{"agentbot chat: OPENAI_API_KEY is a placeholder"}, nil},
		{"base URL without a scheme (chat)", map[string]string{"OPENAI_BASE_URL": "localhost:11434/v1"},
			[]string{"chat", "--agent", "product-lead"}, 2,
			[]string{`agentbot chat: $OPENAI_BASE_URL="localhost:11434/v1": want a URL starting with http:// or https://, such as https://api.openai.com/v1 or http://localhost:11434/v1`}, nil},
		{"base URL without a scheme (flag, serve)", nil,
			[]string{"serve", "--base-url", "api.openai.com/v1"}, 2, []string{`agentbot serve: --base-url=api.openai.com/v1: want a URL starting with http://`}, nil},
		{"base URL without a scheme (check)", map[string]string{"OPENAI_BASE_URL": "127.0.0.1:8000"},
			[]string{"check"}, 2, []string{`agentbot check: $OPENAI_BASE_URL="127.0.0.1:8000": want a URL starting with http://`}, nil},
		{"chat: unknown agent among good ones", map[string]string{"OPENAI_API_KEY": "k"},
			[]string{"chat", "--agent", "nobody"}, 2, []string{
				`agentbot chat: no agent "nobody"`, "  known agents: ", "product-lead", "  looked in: bundles " + bundlesDir(t)}, nil},
		{"chat: bundles folder that is not there", map[string]string{"OPENAI_API_KEY": "k", "AGENTBOT_BUNDLES": "./nope"},
			[]string{"chat", "--agent", "product-lead", "--bmad-root", notBMAD}, 2, []string{
				`agentbot chat: no agent "product-lead"`, "  no agent could be loaded", "  2 problem(s):",
				"nope: bundle folder not found", notBMAD + ": not a BMAD install",
				"point --bundles or --bmad-root (AGENTBOT_BUNDLES, AGENTBOT_BMAD_ROOT) at your agents"}, nil},
		{"serve: no agent at all", map[string]string{"SLACK_APP_TOKEN": fake.AppToken(), "SLACK_BOT_TOKEN": fake.BotToken(), "SLACK_API_URL": fake.APIURL(),
			"OPENAI_API_KEY": "k", "AGENTBOT_BUNDLES": "./nope"},
			[]string{"serve"}, 1, []string{"agentbot serve: no agent to serve", "  1 problem(s):", "nope: bundle folder not found", "agentbot agents lists what is found"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{"AGENTBOT_DATA": filepath.Join(t.TempDir(), "data"), "AGENTBOT_BUNDLES": bundlesDir(t)}
			for k, v := range tc.vars {
				vars[k] = v
			}
			r := runCmd(t, vars, "", tc.args...)
			r.wantCode(t, tc.code)
			for _, w := range tc.want {
				contains(t, "stderr", r.stderr, w)
			}
			for _, n := range tc.not {
				lacks(t, "output", r.stdout+r.stderr, n)
			}
		})
	}
}
