package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
)

// check refuses the model key chat and serve refuse, with their very
// words (one rule, check.APIKey): the README's placeholder, and no key for
// OpenAI. The model is not asked with such a key. A local endpoint without
// a key passes in all three.
func TestCheckAppliesChatsKeyRule(t *testing.T) {
	fm := fakemodel.NewTB(t)
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string // the refusal, "" when all three accept
	}{
		{"the README's placeholder", map[string]string{"OPENAI_API_KEY": "sk-…", "OPENAI_BASE_URL": fm.URL()},
			"OPENAI_API_KEY is a placeholder (copied from an example, such as sk-…)"},
		{"no key for OpenAI", map[string]string{},
			"OPENAI_API_KEY is missing: set it (or --api-key) to your OpenAI API key"},
		{"no key for Azure", map[string]string{"OPENAI_API_TYPE": "azure", "OPENAI_BASE_URL": fm.URL(), "OPENAI_API_VERSION": "2025-04-01-preview"},
			"OPENAI_API_KEY is missing: set it (or --api-key) to your Azure OpenAI API key"},
		{"no key for a local endpoint", map[string]string{"OPENAI_BASE_URL": fm.URL()}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.vars["AGENTBOT_DATA"] = filepath.Join(t.TempDir(), "data")
			calls := fm.Calls()
			chat := runCmd(t, tc.vars, "", "chat", "--agent", "product-lead")
			check := runCmd(t, tc.vars, "", "check", "--no-slack", "--check-timeout", "5s")
			if tc.want == "" {
				lacks(t, "chat's stderr", chat.stderr, "OPENAI_API_KEY")
				contains(t, "check's output", check.stdout, "✓ model API key: none set, as "+fm.URL()+" may need none")
				return
			}
			chat.wantCode(t, 2)
			contains(t, "chat's stderr", chat.stderr, "agentbot chat: "+tc.want)
			check.wantCode(t, 1)
			refusal := strings.TrimPrefix(firstLine(chat.stderr), "agentbot chat: ")
			contains(t, "check's output", check.stdout, "✗ model API key: "+refusal+"\n")
			contains(t, "check's output", check.stdout, "see docs/configuration.md, section 'Model providers'")
			contains(t, "check's output", check.stdout, "- model endpoint: skipped: OPENAI_API_KEY is missing or a placeholder")
			if n := fm.Calls(); n != calls {
				t.Errorf("the model was asked %d times with a key chat refuses", n-calls)
			}
		})
	}
}

// firstLine is s's first line.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Slack refusing Socket Mode to the app-level token gets the same hint
// from check and from serve, which logs each refusal at error level and
// exits with the hint after a few, instead of retrying silently.
func TestSocketModeRefusalSameHintInCheckAndServe(t *testing.T) {
	s := newCheckSetup(t)
	s.slack.RefuseSocketMode("not_allowed_token_type")
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("check exit %d, want 1", code)
	}
	line(t, out, "✗ Slack Socket Mode: SLACK_APP_TOKEN: apps.connections.open: Slack refused it: not_allowed_token_type")
	hint := strings.TrimPrefix(strings.TrimSpace(line(t, out, "    hint: SLACK_APP_TOKEN is not an app-level token")), "hint: ")
	contains(t, "check's hint", hint, "connections:write")
	contains(t, "check's hint", hint, "see docs/slack.md, section 'Setting up the Slack app'")

	s.vars["AGENTBOT_BUNDLES"] = bundlesDir(t)
	start := time.Now()
	r := runCmd(t, s.vars, "", "serve")
	r.wantCode(t, 1)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("serve took %s to give up", d)
	}
	contains(t, "serve's log", r.stderr, `level=ERROR msg="Slack refused the Socket Mode connection; trying again" error=not_allowed_token_type`)
	contains(t, "serve's exit", r.stderr, "agentbot serve: Slack refused the Socket Mode connection 5 times in a row (apps.connections.open: not_allowed_token_type): "+hint)
	lacks(t, "serve's output", r.stderr, fakeslack.DefaultAppToken)
}

// check names gpt-4.1's family gpt-4.1, not gpt-4.
func TestCheckNamesTheModelFamily(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["AGENTBOT_MODEL"] = "gpt-4.1"
	_, out := s.check(t, "--no-slack")
	line(t, out, `✓ model API: Chat Completions (auto, for model family "gpt-4.1")`)
}
