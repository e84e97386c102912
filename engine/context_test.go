package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"agentbot/engine/transcript"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
)

// isCompaction reports whether a request is the runtime's compaction call.
func isCompaction(req fakemodel.Request) bool {
	return len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Content, "You compact a long chat")
}

// longSession scripts a model for long sessions: a compaction call gets a
// summary; every other call runs script(turn, request).
func longSession(h *harness, script func(req fakemodel.Request) fakemodel.Reply) {
	h.fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		if isCompaction(req) {
			return fakemodel.Reply{Text: "Summary: the user is writing a PRD for one-click reorder; decisions so far are in prd.md.", Chunks: 1}
		}
		return script(req)
	})
}

// A session that saves a 16 KB prd.md 40 times, as step-by-step workflows
// do, stays under the model's window (the fake refuses anything larger) and
// its last turn answers.
func TestContextFortySaves(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fm.SetContextWindow(128000)
	s, _ := h.start("t/forty", "product-lead")
	longSession(h, func(req fakemodel.Request) fakemodel.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == transcript.RoleUser {
			n := strings.TrimPrefix(last.Content, "step ")
			doc := fmt.Sprintf("# PRD, step %s\n", n) + strings.Repeat("The reorder button lets a buyer repeat an order. ", 16*1024/49)
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": doc})}, Chunks: 1}
		}
		return fakemodel.Reply{Text: "Saved. Next step?", Chunks: 1}
	})
	var res *engine.Result
	for i := 1; i <= 40; i++ {
		res = h.turn(s, fmt.Sprintf("step %d", i))
	}
	if res.Text != "Saved. Next step?" {
		t.Fatalf("last turn: %+v", res)
	}
	max := 0
	for _, req := range h.fm.Requests() {
		max = maxInt(max, len(req.Raw)/4)
	}
	if max > 128000 {
		t.Fatalf("a request of about %d tokens passed the window", max)
	}
	if s.Elided == 0 {
		t.Fatal("nothing was elided in 40 saves of 16 KB")
	}
	t.Logf("40 saves: largest request about %d tokens; prefix breaks %d, compactions %d", max, s.PrefixBreaks, s.Compactions)
}

// runLong runs turns of a scripted long session: every fifth turn reads a
// large file, every seventh saves the document; the others are talk.
func runLong(t testing.TB, h *harness, s *engine.Session, turns int) {
	longSession(h, func(req fakemodel.Request) fakemodel.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role != transcript.RoleUser {
			return fakemodel.Reply{Text: "Done; " + strings.Repeat("here is what I did and what comes next. ", 12), Chunks: 1}
		}
		var n int
		fmt.Sscanf(last.Content, "turn %d", &n)
		switch {
		case n%5 == 0:
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/core/tasks/workflow.md"})}, Chunks: 1}
		case n%7 == 0:
			doc := strings.Repeat(fmt.Sprintf("Section %d of the PRD. ", n), 200)
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": doc})}, Chunks: 1}
		}
		return fakemodel.Reply{Text: "Noted: " + strings.Repeat("a considered answer with a follow-up question. ", 15), Chunks: 1}
	})
	for i := 1; i <= turns; i++ {
		h.turn(s, fmt.Sprintf("turn %d: %s", i, strings.Repeat("the user explains a detail of the product. ", 10)))
	}
}

// A 300-turn session stays under a small budget on every request, with few
// prefix breaks, and every request is valid for strict providers.
func TestContextThreeHundredTurns(t *testing.T) {
	const budget = 24000
	// No store: 300 turns of fsyncs would only measure the disk.
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) { c.ContextBudget = budget; c.Store = nil }})
	h.fm.SetContextWindow(budget)
	s, _ := h.start("t/300", "product-lead")
	runLong(t, h, s, 300)
	reqs := h.fm.Requests()
	compactions, largest := 0, 0
	for _, req := range reqs {
		if isCompaction(req) {
			compactions++
			continue
		}
		largest = maxInt(largest, len(req.Raw)/4)
		if err := fakemodel.ValidateHistory(req.Messages); err != nil {
			t.Fatalf("request %d: %v", req.N, err)
		}
	}
	if compactions == 0 || s.Compactions != compactions {
		t.Fatalf("compactions: %d calls, session says %d", compactions, s.Compactions)
	}
	if largest > budget {
		t.Fatalf("largest request about %d tokens, budget %d", largest, budget)
	}
	if s.PrefixBreaks > 60 {
		t.Fatalf("%d prefix breaks in 300 turns", s.PrefixBreaks)
	}
	t.Logf("300 turns: %d requests, largest about %d tokens of %d, %d compactions, %d prefix breaks", len(reqs), largest, budget, compactions, s.PrefixBreaks)
}

// After a compaction the model still gets the active workflow's
// instructions (the skill loaded by the menu) and the summary, and the
// last turns verbatim.
func TestContextKeepsWorkflowAfterCompaction(t *testing.T) {
	root := ""
	h, _ := skillHarness(t, func(r string) { root = r })
	_ = root
	h.eng = engine.New(engineConfigWithBudget(h, 16000))
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "What is the product?"})
	h.turn(s, "PRD")
	longSession(h, func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "Next question: " + strings.Repeat("who, what, why? ", 30), Chunks: 1}
	})
	for i := 0; i < 60 && s.Compactions == 0; i++ {
		h.turn(s, fmt.Sprintf("answer %d: %s", i, strings.Repeat("details of the product. ", 40)))
	}
	if s.Compactions == 0 {
		t.Fatal("no compaction in 60 turns")
	}
	h.turn(s, "the latest answer")
	reqs := h.fm.Requests()
	last := reqs[len(reqs)-1]
	raw := string(last.Raw)
	for _, want := range []string{"# BMad PRD", "The runtime summarized the earlier conversation", "Summary: the user is writing a PRD", "the latest answer"} {
		if !strings.Contains(raw, want) {
			t.Errorf("the request after compaction lacks %q", want)
		}
	}
	if err := fakemodel.ValidateHistory(last.Messages); err != nil {
		t.Fatal(err)
	}
}

// A provider's context_length_exceeded triggers a compaction and one retry,
// never a dead end.
func TestContextLengthExceededRecovers(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/exceeded", "product-lead")
	longSession(h, func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "Fine: " + strings.Repeat("a long and careful answer. ", 40), Chunks: 1}
	})
	for i := 0; i < 30; i++ {
		h.turn(s, fmt.Sprintf("turn %d %s", i, strings.Repeat("more context from the user. ", 40)))
	}
	// The engine believes the window is 128k; the provider's is smaller.
	h.fm.SetContextWindow(len(h.fm.Requests()[len(h.fm.Requests())-1].Raw)/4 - 500)
	res := h.turn(s, "and now?")
	if !strings.HasPrefix(res.Text, "Fine:") {
		t.Fatalf("turn after context_length_exceeded: %+v", res)
	}
	if s.Compactions != 1 {
		t.Fatalf("compactions = %d", s.Compactions)
	}
}

// Token estimates learn from the provider's reported prompt tokens.
func TestContextCalibratesEstimate(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/calib", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Text: "a", Usage: fakemodel.Usage{Prompt: 50000, Completion: 1}})
	h.turn(s, "hi")
	if s.TokenRatio < 2 {
		t.Fatalf("token ratio after a 50k-token report = %.2f", s.TokenRatio)
	}
}

func engineConfigWithBudget(h *harness, budget int) engine.Config {
	cfg := h.cfg
	cfg.ContextBudget = budget
	return cfg
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// BenchmarkContextPerTurn measures context management on a 300-turn
// transcript, as each model call of a turn pays it: the estimate, the
// elision/compaction check (which triggers nothing here) and building the
// request. Target: under 1 ms per turn.
func BenchmarkContextPerTurn(b *testing.B) {
	h := newHarness(b, harnessOpts{mutate: func(c *engine.Config) { c.Store = nil; c.ContextBudget = 10_000_000 }})
	s, _ := h.start("b/ctx", "product-lead")
	for i := 0; i < 300; i++ {
		s.Messages = append(s.Messages,
			transcript.Message{Role: transcript.RoleUser, Content: fmt.Sprintf("turn %d: %s", i, strings.Repeat("detail ", 60))},
			transcript.Message{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: fmt.Sprintf("c%d", i), Type: "function", Function: transcript.FunctionCall{Name: "save_output", Arguments: `{"path":"prd.md","content":"` + strings.Repeat("x", 3000) + `"}`}}}},
			transcript.Message{Role: transcript.RoleTool, ToolCallID: fmt.Sprintf("c%d", i), Content: `{"path":"/outputs/prd.md","bytes":3000,"version":1}`},
			transcript.Message{Role: transcript.RoleAssistant, Content: strings.Repeat("an answer ", 50)})
	}
	s.Elided = len(s.Messages) - 40
	b.ReportAllocs()
	for b.Loop() {
		engine.ContextStep(h.eng, s)
	}
}

// BenchmarkContextBytes300Turns runs the same 300-turn session with context
// management (a 24k-token budget) and without it (a budget nothing
// reaches), and reports the bytes sent in all, their ratio, the largest
// request and the prefix breaks.
func BenchmarkContextBytes300Turns(b *testing.B) {
	run := func(budget int) (sent, largest int, s *engine.Session) {
		h := newHarness(b, harnessOpts{mutate: func(c *engine.Config) { c.ContextBudget = budget; c.Store = nil }})
		s, _ = h.start("b/300", "product-lead")
		runLong(b, h, s, 300)
		for _, r := range h.fm.Requests() {
			sent += len(r.Raw)
			largest = maxInt(largest, len(r.Raw))
		}
		return sent, largest, s
	}
	for b.Loop() {
		managed, largestM, s := run(24000)
		plain, largestP, _ := run(10_000_000)
		b.ReportMetric(float64(managed)/1e6, "managed-MB")
		b.ReportMetric(float64(plain)/1e6, "unmanaged-MB")
		b.ReportMetric(float64(managed)/float64(plain), "managed/unmanaged")
		b.ReportMetric(float64(largestM)/4, "managed-max-tokens")
		b.ReportMetric(float64(largestP)/4, "unmanaged-max-tokens")
		b.ReportMetric(float64(s.PrefixBreaks), "prefix-breaks")
		b.ReportMetric(float64(s.Compactions), "compactions")
	}
}
