package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// personaOf names the persona a sub-turn request is for ("" for the
// orchestrator's requests): its system prompt starts "You are NAME".
func personaOf(req fakemodel.Request) string {
	if len(req.Messages) == 0 || !strings.Contains(req.Messages[0].Content, "## This turn") {
		return ""
	}
	rest := strings.TrimPrefix(req.Messages[0].Content, "You are ")
	if i := strings.IndexAny(rest, ",."); i > 0 {
		return rest[:i]
	}
	return rest
}

// roundModel answers the orchestrator with a party_round call of names,
// then a woven answer; each persona's sub-request is held for hold, and the
// most requests in flight at once is counted.
type roundModel struct {
	names    []string
	hold     time.Duration
	inFlight atomic.Int32
	maxIn    atomic.Int32
	orch     atomic.Int32
	mu       sync.Mutex
	personas map[string]fakemodel.Request
}

func (m *roundModel) handle(req fakemodel.Request) fakemodel.Reply {
	if p := personaOf(req); p != "" {
		n := m.inFlight.Add(1)
		for {
			old := m.maxIn.Load()
			if n <= old || m.maxIn.CompareAndSwap(old, n) {
				break
			}
		}
		time.Sleep(m.hold)
		m.inFlight.Add(-1)
		m.mu.Lock()
		m.personas[p] = req
		m.mu.Unlock()
		return fakemodel.Reply{Text: p + " thinks exports come first, on their own."}
	}
	if m.orch.Add(1) == 1 {
		args, _ := json.Marshal(map[string]any{"personas": m.names, "prompt": "Exports or dashboards first?"})
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "party_round", Arguments: string(args)}}}
	}
	return fakemodel.Reply{Text: "📊 **Mary:** Mary thinks exports come first, on their own."}
}

// partyHarness is a harness over the 6.12 project with mutate applied.
func partyHarness(t *testing.T, mutate func(*engine.Config)) *harness {
	root := fixtures.Copy(t, fixtures.V612)
	return newHarness(t, harnessOpts{bmad: []string{root}, mutate: mutate})
}

// In subagent mode a round makes one sub-request per persona, each with
// that persona's own prompt from its agent definition and only read-only
// tools, all in flight at once; their words reach the orchestrator as
// said, and every sub-turn's usage counts in the turn's and session's.
func TestPartySubagentRound(t *testing.T) {
	h := partyHarness(t, nil)
	m := &roundModel{names: []string{"Mary", "Winston", "John"}, hold: 300 * time.Millisecond, personas: map[string]fakemodel.Request{}}
	h.fm.Handle(m.handle)
	s, _ := h.start("k", "pm")
	res := h.turn(s, "party --mode subagent about exports")
	if len(m.personas) != 3 || m.maxIn.Load() != 3 {
		t.Fatalf("%d persona requests, at most %d at once; want 3 and 3", len(m.personas), m.maxIn.Load())
	}
	for name, role := range map[string]string{
		"Mary":    "Help the user ideate research and analyze",
		"Winston": "System Architect",
		"John":    "Product Manager",
	} {
		req := m.personas[name]
		contains(t, req.Messages[0].Content, role, name+"'s persona prompt")
		contains(t, req.Messages[1].Content, "party --mode subagent about exports", name+"'s view of the conversation")
		contains(t, req.Messages[1].Content, "Exports or dashboards first?", name+"'s prompt")
		var tools []string
		for _, tl := range req.Tools {
			tools = append(tools, tl.Function.Name)
		}
		if strings.Join(tools, ",") != "list_files,read_file" {
			t.Errorf("%s's tools: %v", name, tools)
		}
	}
	reqs := h.fm.Requests()
	last := reqs[len(reqs)-1]
	results := toolResults(t, last)
	round := results[len(results)-1]
	turns, _ := round["turns"].([]any)
	if len(turns) != 3 || turns[1].(map[string]any)["said"] != "Winston thinks exports come first, on their own." || turns[1].(map[string]any)["icon"] != "🏗️" {
		t.Fatalf("round result: %v", round)
	}
	if res.Usage.Calls != 5 || s.Usage.Calls != 5 {
		t.Fatalf("usage counts %d calls in the turn, %d in the session; want 5 (2 + 3 sub-turns)", res.Usage.Calls, s.Usage.Calls)
	}
}

// In session mode the round is refused: the orchestrator voices everyone.
func TestPartyRoundRefusedInSessionMode(t *testing.T) {
	h := partyHarness(t, nil)
	m := &roundModel{names: []string{"Mary"}, personas: map[string]fakemodel.Request{}}
	h.fm.Handle(m.handle)
	s, _ := h.start("k", "pm")
	h.turn(s, "party about exports")
	if len(m.personas) != 0 {
		t.Fatalf("%d persona requests in session mode", len(m.personas))
	}
	reqs := h.fm.Requests()
	res := toolResults(t, reqs[len(reqs)-1])
	if e, _ := res[len(res)-1]["error"].(string); !strings.Contains(e, "session mode") {
		t.Fatalf("round in session mode: %v", res[len(res)-1])
	}
}

// A stop ends every sub-turn: personas that never answer are cut when the
// turn's context ends, and the turn returns.
func TestPartyStopEndsSubTurns(t *testing.T) {
	h := partyHarness(t, nil)
	var started atomic.Int32
	var orch atomic.Int32
	h.fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		if personaOf(req) != "" {
			started.Add(1)
			return fakemodel.Reply{Hang: true}
		}
		if orch.Add(1) == 1 {
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "party_round", Arguments: `{"personas":["Mary","Winston","John"],"prompt":"go"}`}}}
		}
		return fakemodel.Reply{Text: "ok"}
	})
	s, _ := h.start("k", "pm")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.eng.Turn(ctx, s, "party --mode subagent", h.emit)
		done <- err
	}()
	waitUntil(t, func() bool { return started.Load() == 3 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("stopped turn: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the turn did not end after the stop: its sub-turns still run")
	}
	if orch.Load() != 1 {
		t.Fatalf("%d orchestrator calls after the stop", orch.Load())
	}
}

// A session whose budget is nearly used refuses the round: the turn ends
// cleanly, with the orchestrator voicing the personas itself.
func TestPartyRoundBudgetNear(t *testing.T) {
	h := partyHarness(t, func(c *engine.Config) {
		c.Budget = func(_ context.Context, s *engine.Session, _ engine.Usage) engine.Budget {
			return engine.Budget{Used: s.Usage.Tokens(), Limit: s.Usage.Tokens() + 1, Name: "session's token budget"}
		}
	})
	m := &roundModel{names: []string{"Mary", "Winston"}, personas: map[string]fakemodel.Request{}}
	h.fm.Handle(m.handle)
	s, _ := h.start("k", "pm")
	res, err := h.eng.Turn(context.Background(), s, "party --mode subagent", h.emit)
	if err != nil || res.Text == "" {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if len(m.personas) != 0 {
		t.Fatalf("%d persona requests over budget", len(m.personas))
	}
	reqs := h.fm.Requests()
	r := toolResults(t, reqs[len(reqs)-1])
	if e, _ := r[len(r)-1]["error"].(string); !strings.Contains(e, "nearly used up") {
		t.Fatalf("round over budget: %v", r[len(r)-1])
	}
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A party's sub-turns count against the daily budget too: the day's usage
// after a subagent round is the turn's, sub-turns included.
func TestPartyRoundCountsDaily(t *testing.T) {
	budgets := &engine.Budgets{DailyTokens: 10_000_000}
	h := partyHarness(t, func(c *engine.Config) { c.Budgets = budgets })
	m := &roundModel{names: []string{"Mary", "Winston"}, personas: map[string]fakemodel.Request{}}
	h.fm.Handle(m.handle)
	ctx := context.Background()
	c, err := h.eng.Open(ctx, h.st, "team1/chan/thread")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, h.agent("pm"), nil); err != nil {
		t.Fatal(err)
	}
	res, err := c.Run(ctx, "party --mode subagent", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	day, _ := budgets.Daily(ctx, "team1")
	var subRequests int
	for _, req := range h.fm.Requests() {
		if personaOf(req) != "" {
			subRequests++
		}
	}
	if subRequests != 2 || res.Usage.Calls != 4 || day != res.Usage.Tokens() || day == 0 {
		t.Fatalf("day %d, turn %d tokens in %d calls (%d sub-requests)", day, res.Usage.Tokens(), res.Usage.Calls, subRequests)
	}
}
