package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/storage"
)

// Malformed tool arguments and unknown tools become error results the model
// can recover from; the turn goes on.
func TestBadToolCallsBecomeRecoverableErrors(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/bad", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			{Name: "read_file", Arguments: `{"path": "config.yaml"`}, // truncated JSON
			{Name: "delete_everything", Arguments: `{}`},
			{Name: "save_output", Arguments: `{"path": "x.md"}`}, // no content
			{Name: "read_file", Arguments: ``},
		}},
		fakemodel.Reply{Text: "Sorry, recovered."},
	)
	res := h.turn(s, "hello")
	if res.Text != "Sorry, recovered." || res.Iterations != 2 {
		t.Fatalf("result = %+v", res)
	}
	results := toolResults(t, h.fm.Requests()[1])
	want := []string{"invalid JSON arguments for read_file", "unknown tool \"delete_everything\"", "save_output needs a path and the content", "read_file needs a path"}
	if len(results) != len(want) {
		t.Fatalf("results = %v", results)
	}
	for i, w := range want {
		e, _ := results[i]["error"].(string)
		if !strings.Contains(e, w) {
			t.Errorf("result %d error = %q, want %q", i, e, w)
		}
	}
	if ends := h.eventsOf(engine.EventToolEnd); len(ends) != 4 || ends[0].Err == "" {
		t.Fatalf("tool end events = %+v", ends)
	}
}

// Hostile paths through the tools: refused with short errors that never show
// host paths; nothing is written outside the session folder.
func TestToolsRefuseHostilePaths(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/hostile", "product-lead")
	other, _ := h.start("t/other", "product-lead")
	otherOut, _ := h.st.OutputDir(other.ID)
	if err := os.WriteFile(filepath.Join(otherOut, "secret.md"), []byte("other thread"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(h.dir, "outside.txt")
	os.WriteFile(outside, []byte("host file"), 0o600)
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			call("read_file", map[string]string{"path": "../../../../etc/passwd"}),
			call("read_file", map[string]string{"path": outside}),
			call("read_file", map[string]string{"path": filepath.Join(otherOut, "secret.md")}),
			call("read_file", map[string]string{"path": "/outputs/../../etc/passwd"}),
			call("read_file", map[string]string{"path": "config.yaml\x00.png"}),
			call("save_output", map[string]string{"path": "/project/agents/evil.md", "content": "x"}),
			call("save_output", map[string]string{"path": "../escape.md", "content": "x"}),
			call("save_output", map[string]string{"path": outside, "content": "x"}),
			call("read_file", map[string]string{"path": "{nope}/x.md"}),
		}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(s, "try things")
	results := toolResults(t, h.fm.Requests()[0+1])
	if len(results) != 9 {
		t.Fatalf("results = %d", len(results))
	}
	for i, r := range results {
		e, _ := r["error"].(string)
		if e == "" {
			t.Errorf("call %d was not refused: %v", i, r)
		}
		if strings.Contains(e, h.dir) || strings.Contains(e, os.TempDir()) {
			t.Errorf("call %d error leaks a host path: %q", i, e)
		}
	}
	contains(t, results[8]["error"].(string), "unknown variable {nope}", "unknown variable in a path")
	if b, _ := os.ReadFile(outside); string(b) != "host file" {
		t.Fatalf("host file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(fixtures.RepoRoot(t), "bundles", "product-team", "agents", "evil.md")); err == nil {
		t.Fatal("wrote into the bundle")
	}
}

// A model that calls tools forever is stopped at the iteration limit; the
// last call has no tools and the user is told.
func TestToolLoopStopsAtIterationLimit(t *testing.T) {
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) { c.MaxIterations = 5 }})
	s, _ := h.start("t/loop", "product-lead")
	h.fm.Handle(func(r fakemodel.Request) fakemodel.Reply {
		if len(r.Tools) == 0 {
			return fakemodel.Reply{Text: "Here is where we are."}
		}
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}}
	})
	res := h.turn(s, "loop please")
	if !res.LimitReached || res.Iterations != 6 || res.Text != "Here is where we are." {
		t.Fatalf("result = %+v", res)
	}
	reqs := h.fm.Requests()
	if len(reqs[5].Tools) != 0 || len(reqs[4].Tools) == 0 {
		t.Fatalf("only the final call should go without tools")
	}
	if n := h.eventsOf(engine.EventNotice); len(n) != 1 || !strings.Contains(n[0].Text, "limit") {
		t.Fatalf("notices = %+v", n)
	}
}

// An empty answer is asked again once, then reported plainly.
func TestEmptyModelAnswer(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/empty", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Empty: true}, fakemodel.Reply{Text: "Second try works."})
	if res := h.turn(s, "hi"); res.Text != "Second try works." || h.fm.Calls() != 2 {
		t.Fatalf("result = %+v, calls %d", res, h.fm.Calls())
	}
	h.fm.Enqueue(fakemodel.Reply{Empty: true}, fakemodel.Reply{Empty: true})
	res := h.turn(s, "hi again")
	if !strings.Contains(res.Text, "empty answer") {
		t.Fatalf("result = %+v", res)
	}
	for _, m := range s.Messages {
		if m.Role == transcript.RoleAssistant && m.Content == "" && len(m.ToolCalls) == 0 {
			t.Fatal("an empty assistant message was stored")
		}
	}
}

// 429 and 500 storms: retried with backoff, then a clear error; the user's
// message stays in the transcript.
func TestModelErrorStorms(t *testing.T) {
	ctx := context.Background()
	var slept []time.Duration
	h := newHarness(t, harnessOpts{modelCfg: func(c *model.Config) {
		c.Sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return ctx.Err() }
	}})
	s, _ := h.start("t/storm", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Status: 429, RetryAfter: "2"}, fakemodel.Reply{Status: 500}, fakemodel.Reply{Text: "made it"})
	if res := h.turn(s, "first"); res.Text != "made it" {
		t.Fatalf("result = %+v", res)
	}
	if len(slept) != 2 || slept[0] < 2*time.Second {
		t.Fatalf("backoff waits = %v, want 2 with the first honouring Retry-After: 2", slept)
	}
	h.fm.Enqueue(fakemodel.Reply{Status: 500}, fakemodel.Reply{Status: 503}, fakemodel.Reply{Status: 500})
	_, err := h.eng.Turn(context.Background(), s, "second", nil)
	var me *llm.Error
	if !errors.As(err, &me) || me.Tries != 3 {
		t.Fatalf("err = %v", err)
	}
	stored, _ := storage.Session(ctx, h.st, "t/storm")
	if last := stored.Messages[len(stored.Messages)-1]; last.Content != "second" {
		t.Fatalf("the user's message was not kept: %+v", last)
	}
}

// A hanging model hits the call timeout and then the turn timeout.
func TestTimeouts(t *testing.T) {
	h := newHarness(t, harnessOpts{
		modelCfg: func(c *model.Config) { c.CallTimeout = 100 * time.Millisecond; c.MaxTries = 2 },
		mutate:   func(c *engine.Config) { c.TurnTimeout = 2 * time.Second },
	})
	s, _ := h.start("t/hang", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Hang: true}, fakemodel.Reply{Hang: true})
	start := time.Now()
	_, err := h.eng.Turn(context.Background(), s, "hello?", nil)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.fm.Enqueue(fakemodel.Reply{Hang: true})
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := h.eng.Turn(ctx, s, "again", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: err = %v", err)
	}
}

// An agent whose critical file is missing refuses to start and names it.
func TestActivationRefusesMissingCriticalFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bundle.yaml"), []byte("type: standalone\nname: lonely\nagent:\n  id: lonely\n  name: Lonely\n  title: Test\n  file: lonely.md\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "lonely.md"), []byte("```xml\n<agent id=\"lonely\" name=\"Lonely\" title=\"Test\">\n<persona><role>r</role></persona>\n<critical-actions><i>Load into memory {bundle-root}/missing-config.yaml and set variables</i></critical-actions>\n<cmds><c cmd=\"*help\">Help</c></cmds>\n</agent>\n```\n"), 0o644)
	h := newHarness(t, harnessOpts{})
	h.cat = catalog.Load(catalog.Options{Bundles: []string{dir}})
	s, err := live(h.st.NewSession(ctx, "t/lonely"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.eng.Activate(context.Background(), s, h.agent("lonely"))
	if err == nil || !strings.Contains(err.Error(), "/project/missing-config.yaml") || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), dir) {
		t.Fatalf("error leaks the host path: %v", err)
	}
}

// Near the context budget, old bulky tool results are elided in one chunk,
// and requests extend each other again after that.
func TestElisionInOneChunk(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) { c.ContextBudget = 20000 }})
	s, _ := h.start("t/elide", "product-lead")
	read := func(p string) fakemodel.Reply {
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": p})}}
	}
	for i := 0; i < 7 && s.Elided == 0; i++ {
		h.fm.Enqueue(read("/core/tasks/workflow.md"), fakemodel.Reply{Text: "ok"})
		h.turn(s, "read it")
	}
	if s.Elided == 0 {
		t.Fatalf("nothing was elided (transcript %d messages)", len(s.Messages))
	}
	reqs := h.fm.Requests()
	last := reqs[len(reqs)-1]
	stubs := 0
	for _, m := range last.Messages {
		if m.Role == transcript.RoleTool && strings.Contains(m.Content, `"elided"`) {
			stubs++
		}
	}
	if stubs == 0 {
		t.Fatal("the last request has no elided stub")
	}
	// The stored transcript keeps everything.
	stored, _ := storage.Session(ctx, h.st, "t/elide")
	for _, m := range stored.Messages {
		if strings.Contains(m.Content, `"elided"`) {
			t.Fatal("elision changed the stored transcript")
		}
	}
	mark := s.Elided
	h.fm.Enqueue(fakemodel.Reply{Text: "a"}, fakemodel.Reply{Text: "b"})
	h.turn(s, "short")
	h.turn(s, "short again")
	if s.Elided != mark {
		t.Fatalf("elision moved again on small turns: %d → %d", mark, s.Elided)
	}
	reqs = h.fm.Requests()
	a, b := messagesJSON(t, reqs[len(reqs)-2]), messagesJSON(t, reqs[len(reqs)-1])
	for j := range a {
		if string(a[j]) != string(b[j]) {
			t.Fatalf("after elision, requests no longer extend each other at message %d", j)
		}
	}
}

// A reply with arguments that are not JSON and a call without a name is
// stored as every provider accepts it: the next request passes the strict
// fake model's checks, and the error results tell the model what it sent.
// A session stored with such calls before is repaired on its next turn.
func TestMalformedCallsAreStoredValid(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/malformed", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			{ID: "dup", Name: "read_file", Arguments: `{not json`},
			{ID: "dup", Name: "", Arguments: `{"path": "config.yaml"}`},
			{Name: "read_file", Arguments: `["a", "list"]`},
		}},
		fakemodel.Reply{Text: "Recovered."},
		fakemodel.Reply{Text: "Still fine."},
	)
	h.turn(s, "go")
	h.turn(s, "and again")
	reqs := h.fm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, req := range reqs {
		if err := fakemodel.ValidateHistory(req.Messages); err != nil {
			t.Fatalf("request %d is invalid: %v", req.N, err)
		}
	}
	results := toolResults(t, reqs[1])
	if e, _ := results[0]["error"].(string); !strings.Contains(e, "invalid JSON arguments for read_file") || results[0]["raw_arguments"] != "{not json" {
		t.Fatalf("bad JSON result: %v", results[0])
	}
	if e, _ := results[1]["error"].(string); !strings.Contains(e, "no name") {
		t.Fatalf("unnamed call result: %v", results[1])
	}
	if e, _ := results[2]["error"].(string); !strings.Contains(e, "invalid JSON arguments") {
		t.Fatalf("non-object arguments: %v", results[2])
	}
	// An old session holding the raw calls is repaired before it is sent.
	old, _ := h.start("t/old", "product-lead")
	old.Messages = append(old.Messages,
		transcript.Message{Role: transcript.RoleUser, Content: "x"},
		transcript.Message{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "c1", Type: "function", Function: transcript.FunctionCall{Name: "", Arguments: "{bad"}}}},
		transcript.Message{Role: transcript.RoleTool, ToolCallID: "c1", Content: `{"error":"x"}`},
		transcript.Message{Role: transcript.RoleAssistant, Content: "ok"})
	h.fm.Enqueue(fakemodel.Reply{Text: "repaired"})
	if res := h.turn(old, "next"); res.Text != "repaired" {
		t.Fatalf("old session: %+v", res)
	}
}

// TestGroqToolUseFailedNeverRuns: a turn on Groq whose tool-call
// generation failed (tool_use_failed inside the 200 stream) asks again,
// and the answer is the next generation's: the failed one, which named a
// save, saves nothing and is nowhere in the transcript.
func TestGroqToolUseFailedNeverRuns(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.fm.SetProvider(fakemodel.Groq)
	s, _ := h.start("t/groq", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{FailedGeneration: `<function=save_output{"path":"never.md","content":"never saved"}</function>`},
		fakemodel.Reply{Text: "Here is the plan."},
	)
	res := h.turn(s, "plan it")
	if res.Text != "Here is the plan." || h.fm.Calls() != 2 {
		t.Fatalf("result %+v after %d model calls, want the retry's answer", res, h.fm.Calls())
	}
	if len(s.Outputs) != 0 || len(h.eventsOf(engine.EventToolStart)) != 0 {
		t.Fatalf("the failed generation ran: outputs %v", s.Outputs)
	}
	stored, err := h.st.FindSession(context.Background(), "t/groq")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range stored.Messages {
		if strings.Contains(m.Content, "never saved") || len(m.ToolCalls) > 0 {
			t.Fatalf("the failed generation is in the transcript: %+v", m)
		}
	}
}
