package engine_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/engine/transcript"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// A process killed in the middle of a turn loses at most the iteration in
// flight: the next process continues from the stored transcript.
func TestCrashMidTurnResumes(t *testing.T) {
	ctx := context.Background()
	if os.Getenv("AGENTBOT_CRASH_CHILD") == "1" {
		crashChild()
		return
	}
	fm := fakemodel.NewTB(t)
	data := filepath.Join(t.TempDir(), "data")
	fm.Enqueue(
		fakemodel.Reply{Text: "What's the idea?"},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "brief.md", "content": "# Brief\n"})}},
		fakemodel.Reply{Hang: true}, // the child dies while waiting for this one
	)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidTurnResumes$")
	cmd.Env = append(os.Environ(), "AGENTBOT_CRASH_CHILD=1", "AGENTBOT_CRASH_DATA="+data, "AGENTBOT_CRASH_MODEL="+fm.URL(), "AGENTBOT_CRASH_BUNDLES="+fixtures.Bundles(t))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for fm.Calls() < 3 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("child made %d model calls", fm.Calls())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	st, err := bolt.Open(data)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer st.Close()
	rec, err := storage.Session(ctx, st, "t/crash")
	if err != nil {
		t.Fatal(err)
	}
	n := len(rec.Messages)
	s := rec
	if s.Agent == nil || s.Agent.ID != "product-lead" || s.Agent.Module == "" {
		t.Fatalf("stored agent snapshot = %+v", s.Agent)
	}
	if n < 3 || s.Messages[n-1].Role != transcript.RoleTool || s.Messages[n-2].ToolCalls == nil || s.Messages[n-3].Content != "A one-click reorder button" {
		t.Fatalf("stored transcript does not end with the user message, the tool call and its result: %+v", s.Messages[n-3:])
	}
	out, _ := st.OutputDir(s.ID)
	if b, err := os.ReadFile(filepath.Join(out, "brief.md")); err != nil || string(b) != "# Brief\n" {
		t.Fatalf("output after crash: %q %v", b, err)
	}
	// A new process continues the session where it stopped, its agent
	// resolved from the catalog.
	cat := catalog.Load(catalog.Options{Bundles: []string{fixtures.Bundles(t)}})
	fm.Enqueue(fakemodel.Reply{Text: "Picking up: who is it for?"})
	eng := engine.New(engine.Config{
		Model: model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m"}), Store: st,
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
		Catalog:    func() *catalog.Catalog { return cat },
	})
	ls, err := eng.Resume(rec)
	if err != nil || ls.AgentDef == nil || ls.AgentDef.ID != "product-lead" {
		t.Fatalf("Resume: %v", err)
	}
	// An empty input resumes the interrupted turn without repeating its input.
	res, err := eng.Turn(context.Background(), ls, "", nil)
	if err != nil || res.Text != "Picking up: who is it for?" {
		t.Fatalf("resume: %v %+v", err, res)
	}
	req := fm.Requests()[3]
	if len(req.Messages) != n {
		t.Fatalf("resumed request has %d messages, want the %d stored", len(req.Messages), n)
	}
	// Resuming a finished turn makes no model call.
	if res, err := eng.Turn(context.Background(), ls, "", nil); err != nil || res.Iterations != 0 || res.Text != "Picking up: who is it for?" {
		t.Fatalf("second resume: %v %+v", err, res)
	}
	if fm.Calls() != 4 {
		t.Fatalf("model calls = %d, want 4", fm.Calls())
	}
}

func crashChild() {
	ctx := context.Background()
	st, err := bolt.Open(os.Getenv("AGENTBOT_CRASH_DATA"))
	if err != nil {
		panic(err)
	}
	cat := catalog.Load(catalog.Options{Bundles: []string{os.Getenv("AGENTBOT_CRASH_BUNDLES")}})
	a, _ := cat.Find("product-lead")
	eng := engine.New(engine.Config{
		Model: model.New(model.Config{APIKey: "k", BaseURL: os.Getenv("AGENTBOT_CRASH_MODEL"), Model: "m", CallTimeout: time.Hour}), Store: st,
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
	})
	s, _ := live(st.NewSession(ctx, "t/crash"))
	if _, err := eng.Activate(context.Background(), s, a); err != nil {
		panic(err)
	}
	eng.Turn(ctx, s, "*brief", nil)
	eng.Turn(ctx, s, "A one-click reorder button", nil) // killed during this turn
	time.Sleep(time.Hour)
}

// A tool call left without a result (the process died while tools ran) gets
// an error result on the next turn, so the transcript is valid again.
func TestDanglingToolCallRepaired(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/dangling", "product-lead")
	s.Messages = append(s.Messages,
		transcript.Message{Role: transcript.RoleUser, Content: "save it"},
		transcript.Message{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{
			{ID: "call_a", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "save_output", Arguments: `{"path":"a.md","content":"a"}`}},
			{ID: "call_b", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "read_file", Arguments: `{"path":"config.yaml"}`}},
		}},
		transcript.Message{Role: transcript.RoleTool, ToolCallID: "call_a", Content: `{"path":"/outputs/a.md","bytes":1}`},
	)
	if err := h.st.SaveSession(ctx, &s.Session); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "Where were we?"})
	h.turn(s, "hello again")
	req := h.fm.Requests()[0]
	var repaired bool
	for _, m := range req.Messages {
		if m.Role == transcript.RoleTool && m.ToolCallID == engine.WireCallID("call_b") && strings.Contains(m.Content, "interrupted") {
			repaired = true
		}
	}
	if !repaired {
		t.Fatal("the dangling call_b got no error result")
	}
}
