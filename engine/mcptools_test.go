package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/mcptest"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
	"agentbot/storage/bolt"
)

// mcpHarness is a harness whose sessions are offered the tools of the
// servers of yaml (an MCP config), all of them.
func mcpHarness(t testing.TB, yaml string) (*harness, *mcp.Manager) {
	t.Helper()
	cfg, probs, err := mcp.ParseConfig([]byte(yaml), func(string) string { return "" })
	if err != nil || len(probs) > 0 {
		t.Fatalf("mcp config: %v %v", err, probs)
	}
	mgr := mcp.NewManager(cfg, mcp.Options{ListBudget: time.Minute}) // wait for the list: these tests are not about the budget
	t.Cleanup(func() { mgr.Close() })
	var names []string
	for _, s := range cfg.Servers {
		names = append(names, s.Name)
	}
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.ExternalTools = mgr.SessionTools(func(*engine.Session) []string { return names }, nil)
	}})
	return h, mgr
}

func webConfig(url string, extra string) string {
	return fmt.Sprintf("servers:\n  - name: web\n    transport: http\n    url: %s\n    timeout: 5s\n%s", url, extra)
}

// resultOf returns the tool result of callID in a request, decoded.
func resultOf(t *testing.T, req fakemodel.Request, callID string) map[string]any {
	t.Helper()
	for _, m := range req.Messages {
		if m.Role == transcript.RoleTool && m.ToolCallID == engine.WireCallID(callID) {
			var r map[string]any
			if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
				t.Fatalf("result of %s is not JSON: %q", callID, m.Content)
			}
			return r
		}
	}
	t.Fatalf("no result for %s in the request", callID)
	return nil
}

func auditOf(s *engine.Session, callID string) (transcript.ToolRecord, bool) {
	for _, r := range s.Audit {
		if r.CallID == callID {
			return r, true
		}
	}
	return transcript.ToolRecord{}, false
}

// A read-only MCP tool runs at once; the model sees its result; the audit
// keeps a digest and a size, never the arguments or the result.
func TestMCPAutoToolRunsAndIsAudited(t *testing.T) {
	ctx := context.Background()
	srv := mcptest.NewHTTPServer(t)
	var recs []transcript.ToolRecord
	h, _ := mcpHarness(t, webConfig(srv.URL, ""))
	h.eng = engine.New(func() engine.Config {
		c := h.cfg
		c.OnToolRecord = func(r transcript.ToolRecord) { recs = append(recs, r) }
		return c
	}())
	s, _ := h.start("t/auto", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			{ID: "c1", Name: "web__echo", Arguments: `{"text":"secret-looking words"}`},
			{ID: "c2", Name: "read_file", Arguments: `{"path":"nope.md"}`},
		}},
		fakemodel.Reply{Text: "done"},
	)
	res := h.turn(s, "echo please")
	if res.Text != "done" || len(res.Pending) != 0 || res.Tools != 2 {
		t.Fatalf("result = %+v", res)
	}
	req := h.fm.Requests()[0]
	found := false
	for _, tl := range req.Tools {
		if tl.Function.Name == "web__echo" {
			found = true
			if !strings.Contains(fmt.Sprint(tl.Function.Parameters), "text") {
				t.Errorf("web__echo schema = %v", tl.Function.Parameters)
			}
		}
	}
	if !found {
		t.Fatal("web__echo not offered to the model")
	}
	if r := resultOf(t, h.fm.Requests()[1], "c1"); r["result"] != "secret-looking words" {
		t.Fatalf("echo result = %v", r)
	}
	if r := resultOf(t, h.fm.Requests()[1], "c2"); r["error"] == nil {
		t.Fatalf("read_file of a missing file = %v", r)
	}
	rec, ok := auditOf(s, "c1")
	if !ok || rec.Tool != "web__echo" || rec.Server != "web" || rec.Outcome != transcript.OutcomeOK || rec.ResultBytes == 0 ||
		rec.ArgsDigest != engine.ArgsDigest(`{"text":"secret-looking words"}`) || !strings.HasPrefix(rec.ArgsDigest, "sha256:") {
		t.Fatalf("audit of c1 = %+v", rec)
	}
	rec, ok = auditOf(s, "c2")
	if !ok || rec.Tool != "read_file" || rec.Server != "" || rec.Outcome != transcript.OutcomeError {
		t.Fatalf("audit of c2 = %+v", rec)
	}
	if len(recs) != 2 {
		t.Fatalf("OnToolRecord saw %d records", len(recs))
	}
	stored, err := h.st.SessionByID(ctx, s.ID)
	if err != nil || len(stored.Audit) != 2 {
		t.Fatalf("stored audit = %+v (%v)", stored, err)
	}
	md := engine.ExportMarkdown(stored)
	if !strings.Contains(md, "## Tool calls") || !strings.Contains(md, rec.ArgsDigest) || !strings.Contains(md, "| web__echo | web | c1 | ok |") {
		t.Fatalf("export lacks the audit:\n%s", md)
	}
	b, _ := json.Marshal(stored.Audit)
	if strings.Contains(string(b), "secret-looking") || strings.Contains(string(b), "nope.md") {
		t.Fatalf("the audit holds arguments or results: %s", b)
	}
}

// pauseOn runs a turn whose first response calls calls; it must pause.
func pauseOn(t *testing.T, h *harness, s *engine.Session, calls ...fakemodel.ToolCall) *engine.Result {
	ctx := context.Background()
	t.Helper()
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: calls})
	res := h.turn(s, "do it")
	if len(res.Pending) == 0 || res.Text != "" {
		t.Fatalf("turn did not pause: %+v", res)
	}
	if !engine.Unfinished(s) {
		t.Fatal("a paused transcript must be unfinished")
	}
	if last := s.Messages[len(s.Messages)-1]; last.Role != transcript.RoleAssistant || len(last.ToolCalls) != len(calls) {
		t.Fatalf("transcript must end with the tool-call message, ends with %+v", last)
	}
	stored, err := h.st.SessionByID(ctx, s.ID)
	if err != nil || len(stored.Pending) != len(res.Pending) {
		t.Fatalf("stored pending = %+v (%v)", stored.Pending, err)
	}
	if evs := h.eventsOf(engine.EventApproval); len(evs) < len(res.Pending) || evs[0].Approval == nil {
		t.Fatalf("approval events = %+v", evs)
	}
	return res
}

// An ask tool pauses the turn; approved, it runs on Turn(""), and the model
// gets its result.
func TestMCPAskApproved(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(srv.URL, ""))
	s, _ := h.start("t/ask", "product-lead")
	res := pauseOn(t, h, s, fakemodel.ToolCall{ID: "w1", Name: "web__write_note", Arguments: `{"text":"hello"}`})
	p := res.Pending[0]
	if p.CallID != "w1" || p.Tool != "web__write_note" || p.Server != "web" || p.Args != `{"text":"hello"}` || p.Asked.IsZero() || p.Decision != "" {
		t.Fatalf("pending = %+v", p)
	}
	if h.fm.Calls() != 1 {
		t.Fatalf("model calls = %d", h.fm.Calls())
	}
	// Turn("") before a decision changes nothing.
	again := h.turn(s, "")
	if len(again.Pending) != 1 || h.fm.Calls() != 1 {
		t.Fatalf("undecided resume = %+v", again)
	}
	if err := h.eng.Decide(context.Background(), s, "nope", transcript.DecisionApproved, "U1"); !errors.Is(err, engine.ErrNoPending) {
		t.Fatalf("Decide unknown id: %v", err)
	}
	if err := h.eng.Decide(context.Background(), s, "w1", "maybe", "U1"); err == nil {
		t.Fatal("Decide with an unknown decision: want error")
	}
	if err := h.eng.Decide(context.Background(), s, "w1", transcript.DecisionApproved, "U1"); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Decide(context.Background(), s, "w1", transcript.DecisionDenied, "U9"); err != nil || s.Pending[0].Decision != transcript.DecisionApproved || s.Pending[0].By != "U1" {
		t.Fatalf("a second decision changed the first: %+v (%v)", s.Pending[0], err)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "noted"})
	res = h.turn(s, "")
	if res.Text != "noted" || len(s.Pending) != 0 || len(s.Held) != 0 {
		t.Fatalf("resumed = %+v, pending %v", res, s.Pending)
	}
	if r := resultOf(t, h.fm.Requests()[1], "w1"); r["result"] != "saved" {
		t.Fatalf("write_note result = %v", r)
	}
	rec, _ := auditOf(s, "w1")
	if rec.Outcome != transcript.OutcomeOK || rec.Approver != "U1" || rec.Server != "web" {
		t.Fatalf("audit = %+v", rec)
	}
}

// Denied and expired calls give the model a result saying so; nothing runs.
func TestMCPAskDeniedAndExpired(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(srv.URL, ""))
	s, _ := h.start("t/deny", "product-lead")
	pauseOn(t, h, s,
		fakemodel.ToolCall{ID: "d1", Name: "web__write_note", Arguments: `{"text":"a"}`},
		fakemodel.ToolCall{ID: "d2", Name: "web__write_note", Arguments: `{"text":"b"}`})
	if err := h.eng.Decide(context.Background(), s, "d1", transcript.DecisionDenied, "U2"); err != nil {
		t.Fatal(err)
	}
	// Still one undecided: no resume yet.
	if r := h.turn(s, ""); len(r.Pending) != 1 || r.Pending[0].CallID != "d2" {
		t.Fatalf("half-decided resume = %+v", r)
	}
	if err := h.eng.Decide(context.Background(), s, "d2", transcript.DecisionExpired, "someone"); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "ok, not saved"})
	if r := h.turn(s, ""); r.Text != "ok, not saved" {
		t.Fatalf("resumed = %+v", r)
	}
	req := h.fm.Requests()[1]
	if r := resultOf(t, req, "d1"); r["error"] != "denied by U2" {
		t.Fatalf("denied result = %v", r)
	}
	if r := resultOf(t, req, "d2"); r["error"] != "no answer within the approval time; denied" {
		t.Fatalf("expired result = %v", r)
	}
	r1, _ := auditOf(s, "d1")
	r2, _ := auditOf(s, "d2")
	if r1.Outcome != transcript.OutcomeDenied || r1.Approver != "U2" || r2.Outcome != transcript.OutcomeExpired || r2.Approver != "" {
		t.Fatalf("audit = %+v %+v", r1, r2)
	}
}

// Parallel calls where one needs approval: the others run once, at once;
// after the decision every result is appended in call order (the strict
// fake model checks the transcript).
func TestMCPParallelCallsOneAsks(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(srv.URL, ""))
	s, _ := h.start("t/par", "product-lead")
	res := pauseOn(t, h, s,
		fakemodel.ToolCall{ID: "p1", Name: "web__echo", Arguments: `{"text":"one"}`},
		fakemodel.ToolCall{ID: "p2", Name: "web__write_note", Arguments: `{"text":"two"}`},
		fakemodel.ToolCall{ID: "p3", Name: "web__echo", Arguments: `{"text":"three"}`})
	if len(res.Pending) != 1 || res.Pending[0].CallID != "p2" || len(s.Held) != 2 || res.Tools != 2 {
		t.Fatalf("pending %+v held %+v tools %d", res.Pending, s.Held, res.Tools)
	}
	if err := h.eng.Decide(context.Background(), s, "p2", transcript.DecisionApproved, "U1"); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "all three"})
	if r := h.turn(s, ""); r.Text != "all three" || r.Tools != 1 {
		t.Fatalf("resumed = %+v", r)
	}
	var order []string
	for _, m := range h.fm.Requests()[1].Messages {
		if m.Role == transcript.RoleTool {
			order = append(order, m.ToolCallID)
		}
	}
	if strings.Join(order, ",") != strings.Join([]string{engine.WireCallID("p1"), engine.WireCallID("p2"), engine.WireCallID("p3")}, ",") {
		t.Fatalf("result order = %v, want p1, p2, p3 as sent", order)
	}
	if r := resultOf(t, h.fm.Requests()[1], "p3"); r["result"] != "three" {
		t.Fatalf("p3 = %v", r)
	}
	n := map[string]int{}
	for _, r := range s.Audit {
		n[r.CallID]++
	}
	if n["p1"] != 1 || n["p2"] != 1 || n["p3"] != 1 {
		t.Fatalf("each call must run once: %v", n)
	}
}

// A pause survives a restart: the session is saved to bbolt, the store
// reopened, the session resumed, decided and continued.
func TestMCPPauseSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	srv := mcptest.NewHTTPServer(t)
	h, mgr := mcpHarness(t, webConfig(srv.URL, ""))
	s, _ := h.start("t/restart", "product-lead")
	pauseOn(t, h, s, fakemodel.ToolCall{ID: "r1", Name: "web__write_note", Arguments: `{"text":"after restart"}`})
	id := s.ID
	h.st.Close()

	st, err := bolt.Open(filepath.Join(h.dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := engine.Config{
		Catalog:       func() *catalog.Catalog { return h.cat },
		Model:         model.New(model.Config{APIKey: "fake-key", BaseURL: h.fm.URL(), Model: "fake-model"}),
		Store:         st,
		OutputRoot:    func(id string) string { d, _ := st.OutputDir(id); return d },
		InputRoot:     func(id string) string { d, _ := st.InputDir(id); return d },
		ExternalTools: mgr.SessionTools(func(*engine.Session) []string { return []string{"web"} }, nil),
	}
	eng := engine.New(cfg)
	rec, err := st.SessionByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := eng.Resume(rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(s2.Pending) != 1 || s2.Pending[0].CallID != "r1" {
		t.Fatalf("pending after restart = %+v", s2.Pending)
	}
	if err := eng.Decide(context.Background(), s2, "r1", transcript.DecisionApproved, "U1"); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "saved after restart"})
	res, err := eng.Turn(context.Background(), s2, "", nil)
	if err != nil || res.Text != "saved after restart" {
		t.Fatalf("turn after restart: %+v %v", res, err)
	}
	if r := resultOf(t, h.fm.Requests()[1], "r1"); r["result"] != "saved" {
		t.Fatalf("r1 = %v", r)
	}
	final, _ := st.SessionByID(ctx, id)
	if len(final.Pending) != 0 || len(final.Audit) != 1 || final.Audit[0].Approver != "U1" {
		t.Fatalf("stored after resume: pending %+v audit %+v", final.Pending, final.Audit)
	}
}

// A new message while calls are pending denies the undecided ones, then
// goes on with the message.
func TestMCPNewMessageDeniesPending(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(srv.URL, ""))
	s, _ := h.start("t/moved", "product-lead")
	pauseOn(t, h, s, fakemodel.ToolCall{ID: "m1", Name: "web__write_note", Arguments: `{"text":"x"}`})
	h.fm.Enqueue(fakemodel.Reply{Text: "fine, something else"})
	res := h.turn(s, "never mind, do something else")
	if res.Text != "fine, something else" || len(s.Pending) != 0 {
		t.Fatalf("result = %+v, pending %+v", res, s.Pending)
	}
	r := resultOf(t, h.fm.Requests()[1], "m1")
	if e, _ := r["error"].(string); !strings.Contains(e, "new message") {
		t.Fatalf("m1 = %v", r)
	}
	if rec, _ := auditOf(s, "m1"); rec.Outcome != transcript.OutcomeDenied {
		t.Fatalf("audit = %+v", rec)
	}
	if err := h.eng.Decide(context.Background(), s, "m1", transcript.DecisionApproved, "U1"); !errors.Is(err, engine.ErrNoPending) {
		t.Fatalf("a late click: %v", err)
	}
}

// A hostile result (invalid UTF-8, fake approval text) is a result like any
// other: the pending call stays pending.
func TestMCPHostileResultApprovesNothing(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(srv.URL, "    policy: {hostile: auto}\n"))
	s, _ := h.start("t/hostile-mcp", "product-lead")
	pauseOn(t, h, s,
		fakemodel.ToolCall{ID: "h1", Name: "web__hostile", Arguments: `{}`},
		fakemodel.ToolCall{ID: "h2", Name: "web__write_note", Arguments: `{"text":"x"}`})
	if len(s.Held) != 1 || !strings.Contains(s.Held[0].Content, "APPROVED") {
		t.Fatalf("held = %+v", s.Held)
	}
	if !json.Valid([]byte(s.Held[0].Content)) || strings.Contains(s.Held[0].Content, "\xff") {
		t.Fatalf("held result not valid UTF-8 JSON: %q", s.Held[0].Content)
	}
	if r := h.turn(s, ""); len(r.Pending) != 1 || s.Pending[0].Decision != "" {
		t.Fatalf("a hostile result decided something: %+v", s.Pending)
	}
	if _, ran := auditOf(s, "h2"); ran {
		t.Fatal("the ask call ran without a decision")
	}
}

// A server that crashes or hangs gives an error result; the turn goes on.
func TestMCPCrashAndHangAreErrorResults(t *testing.T) {
	bin := mcptest.BuildStdio(t)
	h, _ := mcpHarness(t, fmt.Sprintf("servers:\n  - name: local\n    transport: stdio\n    command: %s\n    timeout: 1s\n    policy: {\"*\": auto}\n", bin))
	s, _ := h.start("t/crash", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "x1", Name: "local__crash", Arguments: `{}`}, {ID: "x2", Name: "local__hang", Arguments: `{}`}}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "x3", Name: "local__echo", Arguments: `{"text":"back"}`}}},
		fakemodel.Reply{Text: "recovered"},
	)
	res := h.turn(s, "break it")
	if res.Text != "recovered" {
		t.Fatalf("result = %+v", res)
	}
	for _, id := range []string{"x1", "x2"} {
		r := resultOf(t, h.fm.Requests()[1], id)
		if e, _ := r["error"].(string); !strings.Contains(e, "mcp server local") {
			t.Fatalf("%s = %v", id, r)
		}
		if rec, _ := auditOf(s, id); rec.Outcome != transcript.OutcomeError {
			t.Fatalf("audit %s = %+v", id, rec)
		}
	}
	// The echo after the crash either runs on a reconnected server or gets an
	// error result while it backs off; either way the turn went on.
	if rec, ok := auditOf(s, "x3"); !ok {
		t.Fatalf("x3 not audited: %+v", rec)
	}
}

// The menu shortcut's own calls are audited like the model's.
func TestMenuShortcutCallsAreAudited(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/menu-audit", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Text: "Let's write the brief."})
	h.turn(s, "*brief")
	if len(s.Audit) == 0 {
		t.Fatal("no audit record for the shortcut's calls")
	}
	for _, r := range s.Audit {
		if len(r.CallID) != 9 || engine.WireCallID(r.CallID) != r.CallID || r.Outcome != transcript.OutcomeOK || r.Server != "" || !strings.HasPrefix(r.ArgsDigest, "sha256:") {
			t.Fatalf("record = %+v", r)
		}
	}
}

// Stopping a turn while calls wait for approval keeps the held results,
// closes the waiting calls as stopped, and clears the wait.
func TestInterruptWhilePending(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(srv.URL, ""))
	s, _ := h.start("t/stop", "product-lead")
	pauseOn(t, h, s,
		fakemodel.ToolCall{ID: "s1", Name: "web__echo", Arguments: `{"text":"kept"}`},
		fakemodel.ToolCall{ID: "s2", Name: "web__write_note", Arguments: `{"text":"x"}`})
	if err := h.eng.Interrupt(context.Background(), s, "(stopped)"); err != nil {
		t.Fatal(err)
	}
	if len(s.Pending) != 0 || len(s.Held) != 0 || engine.Unfinished(s) {
		t.Fatalf("pending %+v held %+v", s.Pending, s.Held)
	}
	n := len(s.Messages)
	if s.Messages[n-3].ToolCallID != "s1" || !strings.Contains(s.Messages[n-3].Content, "kept") ||
		s.Messages[n-2].ToolCallID != "s2" || !strings.Contains(s.Messages[n-2].Content, "stopped by the user") {
		t.Fatalf("tail = %+v", s.Messages[n-3:])
	}
	if rec, _ := auditOf(s, "s2"); rec.Outcome != transcript.OutcomeDenied {
		t.Fatalf("audit s2 = %+v", rec)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "next"})
	if r := h.turn(s, "go on"); r.Text != "next" {
		t.Fatalf("after stop = %+v", r)
	}
}

// BenchmarkApprovalClickToTool is the engine's part of an approval: from
// Decide (the click) to the approved MCP call starting, over streamable
// HTTP on loopback with the fake model. The pause itself is not timed.
func BenchmarkApprovalClickToTool(b *testing.B) {
	srv := mcptest.NewHTTPServer(b)
	h, _ := mcpHarness(b, webConfig(srv.URL, ""))
	s, _ := h.start("t/bench-approve", "product-lead")
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		id := fmt.Sprintf("b%d", i)
		h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: id, Name: "web__write_note", Arguments: `{"text":"x"}`}}}, fakemodel.Reply{Text: "ok"})
		res, err := h.eng.Turn(context.Background(), s, "note", nil)
		if err != nil || len(res.Pending) != 1 {
			b.Fatalf("no pause: %+v %v", res, err)
		}
		b.StartTimer()
		click := time.Now()
		var started time.Time
		if err := h.eng.Decide(context.Background(), s, id, transcript.DecisionApproved, "U1"); err != nil {
			b.Fatal(err)
		}
		_, err = h.eng.Turn(context.Background(), s, "", func(ev engine.Event) {
			if ev.Kind == engine.EventToolStart && ev.CallID == id {
				started = time.Now()
			}
		})
		if err != nil || started.IsZero() {
			b.Fatalf("resume: %v", err)
		}
		total += started.Sub(click)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-click-to-tool")
}

// A large result is cut to the engine's read cap (valid UTF-8, marked); a
// tool's Go error is an error result the model can recover from.
func TestExternalResultCapAndErrors(t *testing.T) {
	srv := mcptest.NewHTTPServer(t)
	cfg, _, err := mcp.ParseConfig([]byte(webConfig(srv.URL, "")), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	mgr := mcp.NewManager(cfg, mcp.Options{ListBudget: time.Minute}) // wait for the list: these tests are not about the budget
	t.Cleanup(func() { mgr.Close() })
	web := mgr.SessionTools(func(*engine.Session) []string { return []string{"web"} }, nil)
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.MaxRead = 1001
		c.ExternalTools = func(ctx context.Context, s *engine.Session, notify func(string)) []engine.ExternalTool {
			return append(web(ctx, s, notify), engine.ExternalTool{Name: "local__broken", Server: "local", Policy: engine.PolicyAuto,
				Schema: json.RawMessage(`{"type":"object"}`),
				Call: func(context.Context, json.RawMessage, engine.ExternalCall) (engine.ExternalReply, error) {
					return engine.ExternalReply{}, errors.New("source closed")
				}})
		}
	}})
	s, _ := h.start("t/cap", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "g1", Name: "web__big", Arguments: `{}`}, {ID: "g2", Name: "local__broken", Arguments: `{}`}}},
		fakemodel.Reply{Text: "ok"},
	)
	if r := h.turn(s, "big"); r.Text != "ok" {
		t.Fatalf("result = %+v", r)
	}
	big := resultOf(t, h.fm.Requests()[1], "g1")
	text, _ := big["result"].(string)
	if big["truncated"] != true || len(text) > 1001 || len(text) < 900 || !utf8.ValidString(text) {
		t.Fatalf("big: truncated=%v len=%d", big["truncated"], len(text))
	}
	if e, _ := resultOf(t, h.fm.Requests()[1], "g2")["error"].(string); !strings.Contains(e, "source closed") {
		t.Fatalf("broken = %q", e)
	}
	if rec, _ := auditOf(s, "g2"); rec.Outcome != transcript.OutcomeError || rec.Server != "local" {
		t.Fatalf("audit g2 = %+v", rec)
	}
}
