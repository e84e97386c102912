package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
)

// A cap counted from the reported usage: near it, the turn finishes
// without more tools and says so; at it, a new turn is refused before any
// model call, with an error naming the cap and who can raise it.
func TestTokenBudget(t *testing.T) {
	budget := func(_ context.Context, s *engine.Session, turn engine.Usage) engine.Budget {
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

// Budgets: the tightest cap wins, daily usage is kept per workspace (the
// key's first segment) and day, and the messages name the cap, the use
// and who can raise it.
func TestBudgetsCapsAndUsage(t *testing.T) {
	day := time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC)
	b := &engine.Budgets{SessionTokens: 1000, DailyTokens: 5000, Admins: []string{"<@U1>"}, Now: func() time.Time { return day }}
	s := &engine.Session{}
	s.Key = "T1/C1/1.2"
	s.Usage = engine.Usage{Prompt: 600, Completion: 100}
	if got := b.Budget(context.Background(), s, engine.Usage{}); got.Name != "session's token budget" || got.Used != 700 || got.Limit != 1000 {
		t.Fatalf("with room in both caps, the tighter is the session's: %+v", got)
	}
	if err := b.Record(context.Background(), "T1/C9/3.4", engine.Usage{Prompt: 4600}); err != nil {
		t.Fatal(err)
	}
	got := b.Budget(context.Background(), s, engine.Usage{Prompt: 200})
	if got.Name != "workspace's daily token budget" || got.Used != 4800 || !strings.Contains(got.Raise, "an admin (<@U1>) can raise AGENTBOT_DAILY_TOKEN_BUDGET") {
		t.Fatalf("the daily cap is tighter now: %+v", got)
	}
	if used, _ := b.Daily(context.Background(), "T2"); used != 0 {
		t.Fatalf("another workspace's usage = %d, want 0", used)
	}
	day = day.Add(2 * time.Hour) // past midnight UTC
	if used, _ := b.Daily(context.Background(), "T1"); used != 0 {
		t.Fatalf("the next day's usage = %d, want 0", used)
	}
	if st := b.Status(s); st != "700 of 1,000 tokens used (70%)" {
		t.Fatalf("Status = %q", st)
	}
	var none *engine.Budgets
	if got := none.Budget(context.Background(), s, engine.Usage{}); got.Limit != 0 || none.Record(context.Background(), "T1/C1/1", engine.Usage{Prompt: 5}) != nil {
		t.Fatalf("a nil Budgets caps: %+v", got)
	}
	msg := (&engine.BudgetError{Budget: engine.Budget{Name: "session's token budget", Used: 1200, Limit: 1000, Raise: "an admin can raise it"}}).Message()
	if msg != "This thread can't continue: the session's token budget is used up (1,200 of 1,000 tokens). An admin can raise it." {
		t.Fatalf("Message = %q", msg)
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5: "-5"} {
		if got := engine.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
