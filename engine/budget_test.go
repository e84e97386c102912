package engine_test

import (
	"errors"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
)

// A cap counted from the reported usage: near it, the turn finishes
// without more tools and says so; at it, a new turn is refused before any
// model call, with an error naming the cap and who can raise it.
func TestTokenBudget(t *testing.T) {
	budget := func(s *engine.Session, turn engine.Usage) engine.Budget {
		return engine.Budget{Used: s.Usage.Tokens(), Limit: 1000, Name: "session's token budget", Raise: "an admin can raise AGENTBOT_SESSION_TOKEN_BUDGET"}
	}
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) { c.Budget = budget }})
	s, _ := h.start("t/budget", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}, Usage: fakemodel.Usage{Prompt: 900, Completion: 20}},
		fakemodel.Reply{Text: "Here is where we are.", Usage: fakemodel.Usage{Prompt: 40, Completion: 10}},
	)
	res := h.turn(s, "go on")
	if !res.BudgetNear || res.Text != "Here is where we are." {
		t.Fatalf("near the cap: %+v", res)
	}
	reqs := h.fm.Requests()
	if last := reqs[len(reqs)-1]; len(last.Tools) != 0 || !strings.Contains(last.LastUserText(), "token budget is nearly used up") {
		t.Fatalf("the last call near the cap still offers tools (%d) or lacks the note", len(last.Tools))
	}
	notices := h.eventsOf(engine.EventNotice)
	if len(notices) == 0 || !strings.Contains(notices[0].Text, "920 of 1000 tokens") {
		t.Fatalf("notices: %+v", notices)
	}
	// 970 tokens used: over 90%, under 100%: a new turn still runs one call.
	h.fm.Enqueue(fakemodel.Reply{Text: "one more", Usage: fakemodel.Usage{Prompt: 25, Completion: 5}})
	h.turn(s, "and?")
	calls := h.fm.Calls()
	_, err := h.eng.Turn(t.Context(), s, "more", nil)
	var be *engine.BudgetError
	if !errors.As(err, &be) || be.Budget.Used != 1000 || !strings.Contains(err.Error(), "AGENTBOT_SESSION_TOKEN_BUDGET") {
		t.Fatalf("at the cap: %v", err)
	}
	if h.fm.Calls() != calls {
		t.Fatal("a turn at the cap called the model")
	}
}
