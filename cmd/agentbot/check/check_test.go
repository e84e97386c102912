package check

import (
	"strings"
	"testing"

	"agentbot/engine/catalog"
)

func TestCheckRedactToken(t *testing.T) {
	for in, want := range map[string]string{
		"xoxb-123-456-abc":  "xoxb-…(redacted)",
		"xapp-1-A-2-abc":    "xapp-…(redacted)",
		"sk-proj-abcdef":    "(redacted)",
		"XOXB-123":          "(redacted)",
		"nodash":            "(redacted)",
		"":                  "(redacted)",
		"toolongprefix-abc": "(redacted)",
	} {
		if got := redactToken(in); got != want {
			t.Errorf("redactToken(%q) = %q, want %q", in, got, want)
		}
	}
}

// isPlaceholder knows the placeholders of examples and leaves real-looking
// values alone, so a real token is never refused as one.
func TestIsPlaceholder(t *testing.T) {
	for _, v := range []string{"xoxb-…", "xapp-…", "sk-…", "sk-...", "xoxb-...", "<token>", "{{SLACK_BOT_TOKEN}}", "[your key]",
		"xoxb-your-token", "xoxb-YOUR-TOKEN-HERE", "sk-changeme", "xapp-xxxx", "sk-proj-xxxxxxxx", "your-api-key", "token", "sk-example-key", " xoxb-… "} {
		if !isPlaceholder(v) {
			t.Errorf("%q is not taken for a placeholder", v)
		}
	}
	for _, v := range []string{"xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx", "xapp-1-A0123456789-1234567890-abcdef0123456789",
		"sk-proj-Ab3dEf6hIj9kLmNoPqRsTuVwXyZ", "sk-or-v1-0123abcd", "ollama", "0123456789abcdef0123456789abcdef",
		"xoxb-pasted-bot-token-as-app", "sk-secret-model-key", "xoxb-tokenizer9"} {
		if isPlaceholder(v) {
			t.Errorf("%q is taken for a placeholder", v)
		}
	}
}

// check names the agents whose MCP tools, with the built-in ones, are
// more than a request may carry (the 131 of nine filesystem servers).
func TestToolOverflowNamesTheAgent(t *testing.T) {
	cat := &catalog.Catalog{Agents: []*catalog.Agent{
		{ID: "many", MCP: []string{"fs1", "fs2"}},
		{ID: "few", MCP: []string{"fs1"}},
		{ID: "none"},
	}}
	over := toolOverflow(cat, map[string]int{"fs1": 63, "fs2": 63})
	if len(over) != 1 || !strings.Contains(over[0], "agent many: 126 MCP tools (fs1, fs2)") || !strings.Contains(over[0], "over 128") {
		t.Fatalf("overflow = %q", over)
	}
	if over := toolOverflow(nil, nil); over != nil {
		t.Fatalf("nil catalog = %q", over)
	}
}
