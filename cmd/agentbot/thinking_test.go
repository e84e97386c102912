package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
)

// A model that reasons shows one "thinking…" line in the terminal before
// its answer, never the reasoning; its reasoning tokens are counted, and
// sessions show names them.
func TestChatThinkingLine(t *testing.T) {
	fm := fakemodel.NewTB(t)
	fm.SetProvider(fakemodel.DeepSeek)
	fm.Enqueue(fakemodel.Reply{Text: "Who is the reorder button for?"})
	vars := chatVars(t, fm)
	vars["AGENTBOT_MODEL"] = "deepseek-v4-flash"
	r := runCmd(t, vars, "*brief\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 0)
	out := r.stdout
	think, answer := strings.Index(out, "  · thinking…\n"), strings.Index(out, "Who is the reorder button for?")
	if think < 0 || answer < think {
		t.Errorf("thinking line at %d, answer at %d:\n%s", think, answer, out)
	}
	if strings.Count(out, "thinking…") != 1 {
		t.Errorf("want one thinking line:\n%s", out)
	}
	lacks(t, "stdout", out, fakemodel.ReasoningMarker)

	s := runCmd(t, vars, "", "sessions", "show", sessionID(t, out))
	s.wantCode(t, 0)
	m := regexp.MustCompile(`completion tokens \((\d+) reasoning\)`).FindStringSubmatch(s.stdout)
	if m == nil {
		t.Fatalf("sessions show has no reasoning tokens:\n%s", s.stdout)
	}
	if n, _ := strconv.Atoi(m[1]); n == 0 {
		t.Errorf("0 reasoning tokens for a reply that reasoned:\n%s", s.stdout)
	}
}
