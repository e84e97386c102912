package engine_test

import (
	"context"
	"errors"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp/mcptest"
	"agentbot/engine/transcript"
)

// Open finds the session of a key or creates it; a second Open resumes the
// same session with its agent.
func TestConversationOpenFindsOrCreates(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	c, err := h.eng.Open(context.Background(), h.st, "T/C/1")
	if err != nil || c.Live.AgentDef != nil || c.Live.Key != "T/C/1" {
		t.Fatalf("open a new key: %+v, %v", c, err)
	}
	if _, err := c.Start(context.Background(), h.agent("product-lead"), func(s *engine.Session) { s.Vars = map[string]string{"user_name": "Ana"} }); err != nil {
		t.Fatal(err)
	}
	again, err := h.eng.Open(context.Background(), h.st, "T/C/1")
	if err != nil || again.Live.ID != c.Live.ID || again.Live.AgentDef == nil || again.Live.AgentDef.ID != "product-lead" {
		t.Fatalf("reopen: %+v, %v", again, err)
	}
	if again.Live.Vars["user_name"] != "Ana" {
		t.Fatalf("prepare's vars were not kept: %v", again.Live.Vars)
	}
}

// A session whose agent left the catalog opens with an *AgentGoneError and
// still hands back the conversation, which can switch to another agent:
// the old session is kept, detached, and the key gets a fresh one.
func TestConversationAgentGoneSwitches(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("T/C/gone", "product-lead")
	rec := &s.Session
	rec.AgentID, rec.Agent = "no-such-agent", nil // as if its bundle was removed
	if err := h.st.SaveSession(context.TODO(), rec); err != nil {
		t.Fatal(err)
	}
	c, err := h.eng.Open(context.Background(), h.st, "T/C/gone")
	var gone *engine.AgentGoneError
	if !errors.As(err, &gone) || c == nil || c.Live.ID != rec.ID {
		t.Fatalf("open: %+v, %v", c, err)
	}
	g, err := c.Switch(context.Background(), h.agent("product-lead"), nil)
	if err != nil || g == nil || g.Text == "" {
		t.Fatalf("switch: %+v, %v", g, err)
	}
	if c.Live.ID == rec.ID || c.Live.AgentDef.ID != "product-lead" {
		t.Fatalf("switch kept the old session %s (agent %v)", c.Live.ID, c.Live.AgentID)
	}
	old, err := h.st.SessionByID(context.TODO(), rec.ID)
	if err != nil || old.AgentID != "no-such-agent" {
		t.Fatalf("the old session is lost: %+v, %v", old, err)
	}
	now, err := h.eng.Open(context.Background(), h.st, "T/C/gone")
	if err != nil || now.Live.ID != c.Live.ID {
		t.Fatalf("the key does not hold the new session: %+v, %v", now, err)
	}
	// A session never used is reused, not detached.
	fresh, _ := h.eng.Open(context.Background(), h.st, "T/C/fresh")
	id := fresh.Live.ID
	if _, err := fresh.Switch(context.Background(), nil, nil); err != nil || fresh.Live.ID != id {
		t.Fatalf("switching an unused session: %s → %s (%v)", id, fresh.Live.ID, err)
	}
}

// Run decides the calls a turn waits on with the decider and resumes until
// nothing is pending; without a decider the calls keep waiting.
func TestConversationRunDecides(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(srv.URL, ""))
	c, err := h.eng.Open(context.Background(), h.st, "T/C/ask")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(context.Background(), h.agent("product-lead"), nil); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "w1", Name: "web__write_note", Arguments: `{"text":"hello"}`}}})
	res, err := c.Run(context.Background(), "note it", h.emit, nil)
	if err != nil || len(res.Pending) != 1 || len(c.Live.Pending) != 1 {
		t.Fatalf("without a decider: %+v, %v", res, err)
	}
	var asked []string
	decide := func(p transcript.Approval) (string, string, bool) {
		asked = append(asked, p.CallID)
		return transcript.DecisionApproved, "terminal", true
	}
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "w2", Name: "web__write_note", Arguments: `{"text":"again"}`}}},
		fakemodel.Reply{Text: "both noted"},
	)
	// The first call is decided by a person (a click), then the run goes
	// on: the model asks for a second call, which the decider approves.
	if err := c.Decide(context.Background(), "w1", transcript.DecisionApproved, "U1"); err != nil {
		t.Fatal(err)
	}
	res, err = c.Run(context.Background(), "", h.emit, decide)
	if err != nil || res.Text != "both noted" || len(c.Live.Pending) != 0 {
		t.Fatalf("run with a decider: %+v, %v (pending %+v)", res, err, c.Live.Pending)
	}
	if len(asked) != 1 || asked[0] != "w2" {
		t.Fatalf("the decider was asked about %v, want [w2]", asked)
	}
	rec, _ := auditOf(c.Live, "w2")
	if rec.Approver != "terminal" || rec.Outcome != transcript.OutcomeOK {
		t.Fatalf("audit of w2 = %+v", rec)
	}
}

// After a failed turn, the next input first closes it, so the transcript
// never holds two user messages in a row; the usage of each turn is added
// to the workspace's day.
func TestConversationClosesFailedTurnAndRecordsUsage(t *testing.T) {
	budgets := &engine.Budgets{DailyTokens: 100000}
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) { c.Budgets = budgets }})
	c, err := h.eng.Open(context.Background(), h.st, "team1/C/fail")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(context.Background(), h.agent("product-lead"), nil); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Status: 400}, fakemodel.Reply{Text: "fine now", Usage: fakemodel.Usage{Prompt: 30, Completion: 12}})
	if _, err := c.Run(context.Background(), "first", h.emit, nil); err == nil || !c.Failed() {
		t.Fatalf("a refused model call: err %v, failed %v", err, c.Failed())
	}
	res, err := c.Run(context.Background(), "second", h.emit, nil)
	if err != nil || res.Text != "fine now" || c.Failed() {
		t.Fatalf("after the failure: %+v, %v", res, err)
	}
	for i := 1; i < len(c.Live.Messages); i++ {
		if c.Live.Messages[i].Role == transcript.RoleUser && c.Live.Messages[i-1].Role == transcript.RoleUser {
			t.Fatalf("two user messages in a row at %d: %+v", i, c.Live.Messages)
		}
	}
	if used, _ := budgets.Daily(context.Background(), "team1"); used != 42 {
		t.Fatalf("daily usage of team1 = %d, want 42", used)
	}
}

// A turn that failed is closed by the next message even when that
// message comes in a conversation opened afresh (Slack opens one per
// message; a terminal resumes by name): the model gets the retry after a
// note, never two user messages in a row.
func TestConversationRetryInFreshConversation(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	c, err := h.eng.Open(context.Background(), h.st, "T/C/retry")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(context.Background(), h.agent("product-lead"), nil); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Status: 400}, fakemodel.Reply{Text: "here now"})
	if _, err := c.Run(context.Background(), "first try", h.emit, nil); err == nil {
		t.Fatal("a refused model call did not fail the turn")
	}
	again, err := h.eng.Open(context.Background(), h.st, "T/C/retry")
	if err != nil || again.Live.ID != c.Live.ID {
		t.Fatalf("reopen: %+v, %v", again, err)
	}
	res, err := again.Run(context.Background(), "second try", h.emit, nil)
	if err != nil || res.Text != "here now" {
		t.Fatalf("the retry: %+v, %v", res, err)
	}
	for i := 1; i < len(again.Live.Messages); i++ {
		if again.Live.Messages[i].Role == transcript.RoleUser && again.Live.Messages[i-1].Role == transcript.RoleUser {
			t.Fatalf("two user messages in a row at %d: %+v", i, again.Live.Messages)
		}
	}
	if !again.Answered() {
		t.Fatal("a session with an answer reports none")
	}
}

// Close drops a session that never got an answer (every model call
// failed), key and all, so a new conversation under the key starts
// afresh; a session with an answer is kept.
func TestConversationCloseDropsUnanswered(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	c, err := h.eng.Open(context.Background(), h.st, "chat/demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(context.Background(), h.agent("product-lead"), nil); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Status: 401})
	if _, err := c.Run(context.Background(), "hello", h.emit, nil); err == nil {
		t.Fatal("a refused model call did not fail the turn")
	}
	if c.Answered() {
		t.Fatal("a session whose only call failed reports an answer")
	}
	if deleted, err := c.Close(context.Background(), h.st); err != nil || !deleted {
		t.Fatalf("close an unanswered session: deleted %v, %v", deleted, err)
	}
	if _, err := h.st.SessionByID(context.TODO(), c.Live.ID); err == nil {
		t.Fatal("the unanswered session is still stored")
	}
	if rec, err := h.st.FindSession(context.TODO(), "chat/demo"); err != nil || rec != nil {
		t.Fatalf("the key still holds a session: %+v, %v", rec, err)
	}

	fresh, err := h.eng.Open(context.Background(), h.st, "chat/demo")
	if err != nil || fresh.Live.ID == c.Live.ID || fresh.Live.AgentDef != nil {
		t.Fatalf("reopen after close: %+v, %v", fresh, err)
	}
	if _, err := fresh.Start(context.Background(), h.agent("product-lead"), nil); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "hi"})
	if _, err := fresh.Run(context.Background(), "hello", h.emit, nil); err != nil {
		t.Fatal(err)
	}
	if deleted, err := fresh.Close(context.Background(), h.st); err != nil || deleted {
		t.Fatalf("close an answered session: deleted %v, %v", deleted, err)
	}
	if _, err := h.st.SessionByID(context.TODO(), fresh.Live.ID); err != nil {
		t.Fatalf("the answered session is gone: %v", err)
	}
}
