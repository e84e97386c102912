package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
)

// stored returns the bytes of a stored document version, failing the test
// when there are none.
func stored(t *testing.T, st engine.OutputStore, id, path string, version int) string {
	ctx := context.Background()
	t.Helper()
	data, err := st.OutputData(ctx, id, path, version)
	if err != nil {
		t.Fatalf("OutputData(%s, %s, v%d): %v", id, path, version, err)
	}
	return string(data)
}

// A saved document goes to the store: written twice in a turn it is one
// version with the final bytes; the next turn's edit is version 2.
func TestOutputsWriteThrough(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/store", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "# PRD draft\n"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "# PRD\nalpha\n"})}},
		fakemodel.Reply{Text: "Saved."},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": "prd.md", "append": "beta\n"})}},
		fakemodel.Reply{Text: "Edited."},
	)
	h.turn(s, "write the prd")
	if len(s.Outputs) != 1 || s.Outputs[0].Version != 1 {
		t.Fatalf("outputs after turn 1: %+v", s.Outputs)
	}
	if got := stored(t, h.st, s.ID, "prd.md", 1); got != "# PRD\nalpha\n" {
		t.Fatalf("v1 stored %q, want the final bytes of the turn", got)
	}
	h.turn(s, "add beta")
	if got := stored(t, h.st, s.ID, "prd.md", 2); got != "# PRD\nalpha\nbeta\n" {
		t.Fatalf("v2 stored %q", got)
	}
	if got := stored(t, h.st, s.ID, "prd.md", 1); got != "# PRD\nalpha\n" {
		t.Fatalf("v1 changed to %q", got)
	}
	if got := stored(t, h.st, s.ID, "prd.md", 0); got != "# PRD\nalpha\nbeta\n" {
		t.Fatalf("latest stored %q", got)
	}
	// The session the store holds records what the store has bytes for.
	rec, err := storage.Session(ctx, h.st, "t/store")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rec.Outputs {
		if data := stored(t, h.st, rec.ID, o.Path, o.Version); int64(len(data)) != o.Size {
			t.Errorf("%s v%d: recorded %d bytes, stored %d", o.Path, o.Version, o.Size, len(data))
		}
	}
}

// failingOutputs stands for a store that refuses documents while fail is set.
type failingOutputs struct {
	engine.OutputStore
	fail atomic.Bool
}

func (f *failingOutputs) PutOutput(ctx context.Context, id string, o transcript.Output, data []byte) error {
	if f.fail.Load() {
		return errors.New("database is down")
	}
	return f.OutputStore.PutOutput(ctx, id, o, data)
}

// A document the store refuses is a tool error the model reads; the file
// stays local, the session records no output, and the model goes on.
func TestOutputsPutFailureIsToolError(t *testing.T) {
	fo := &failingOutputs{}
	fo.fail.Store(true)
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		fo.OutputStore = c.Outputs
		c.Outputs = fo
	}})
	s, _ := h.start("t/fail", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "# PRD\n"})}},
		fakemodel.Reply{Text: "The save failed; I will retry."},
	)
	res := h.turn(s, "write the prd")
	if res.Text != "The save failed; I will retry." {
		t.Fatalf("the model did not go on: %q", res.Text)
	}
	reqs := h.fm.Requests()
	results := toolResults(t, reqs[len(reqs)-1])
	if len(results) != 1 {
		t.Fatalf("tool results %+v", results)
	}
	msg, _ := results[0]["error"].(string)
	contains(t, msg, "could not be stored", "tool result")
	contains(t, msg, "database is down", "tool result")
	if len(s.Outputs) != 0 || len(h.eventsOf(engine.EventOutput)) != 0 {
		t.Fatalf("a refused document was recorded: %+v", s.Outputs)
	}
	dir, _ := h.st.OutputDir(s.ID)
	if data, err := os.ReadFile(filepath.Join(dir, "prd.md")); err != nil || string(data) != "# PRD\n" {
		t.Fatalf("local file: %q, %v", data, err)
	}
	// The store is back: the retry is version 1, stored.
	fo.fail.Store(false)
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "# PRD\nagain\n"})}},
		fakemodel.Reply{Text: "Saved."},
	)
	h.turn(s, "retry")
	if len(s.Outputs) != 1 || s.Outputs[0].Version != 1 {
		t.Fatalf("outputs %+v", s.Outputs)
	}
	if got := stored(t, h.st, s.ID, "prd.md", 1); got != "# PRD\nagain\n" {
		t.Fatalf("stored %q", got)
	}
}

// failover runs a turn on engine A, then the next on engine B: same store,
// an empty data folder. B's model reads and edits the document A saved.
func failover(t *testing.T, st storage.Backend) {
	ctx := context.Background()
	fm := fakemodel.NewTB(t)
	cat := catalog.Load(catalog.Options{Bundles: []string{fixtures.Bundles(t)}})
	newEngine := func(dir string) *engine.Engine {
		return engine.New(engine.Config{
			Catalog: func() *catalog.Catalog { return cat },
			Model: model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m",
				Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}),
			Store:      st,
			Outputs:    st,
			OutputRoot: func(id string) string { return filepath.Join(dir, "outputs", id) },
			InputRoot:  func(id string) string { return filepath.Join(dir, "inputs", id) },
		})
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	engA, engB := newEngine(dirA), newEngine(dirB)
	agent, ok := cat.Find("product-lead")
	if !ok {
		t.Fatal("no product-lead agent")
	}
	s, err := live(st.NewSession(ctx, "t/failover"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engA.Activate(context.Background(), s, agent); err != nil {
		t.Fatal(err)
	}
	doc := "# X\nalpha\n"
	fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "docs/x.md", "content": doc})}},
		fakemodel.Reply{Text: "Saved."},
	)
	if _, err := engA.Turn(context.Background(), s, "write x", nil); err != nil {
		t.Fatal(err)
	}

	// Replica B takes the thread over with nothing on its disk.
	rec, err := storage.Session(ctx, st, "t/failover")
	if err != nil {
		t.Fatal(err)
	}
	sb, err := engB.Resume(rec)
	if err != nil {
		t.Fatal(err)
	}
	fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/outputs/docs/x.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": "docs/x.md", "old_text": "alpha", "new_text": "beta"})}},
		fakemodel.Reply{Text: "Edited."},
	)
	var events []engine.Event
	if _, err := engB.Turn(context.Background(), sb, "change alpha to beta", func(ev engine.Event) {
		if ev.Kind == engine.EventToolEnd {
			events = append(events, ev)
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if ev.Err != "" {
			t.Errorf("%s failed on B: %s", ev.Tool, ev.Err)
		}
	}
	reqs := fm.Requests()
	read := reqs[len(reqs)-2].Messages
	contains(t, read[len(read)-1].Content, "alpha", "read_file on B")
	if got := stored(t, st, s.ID, "docs/x.md", 2); got != "# X\nbeta\n" {
		t.Fatalf("B's edit stored %q", got)
	}
	if data, err := os.ReadFile(filepath.Join(dirB, "outputs", s.ID, "docs", "x.md")); err != nil || string(data) != "# X\nbeta\n" {
		t.Fatalf("B's local file: %q, %v", data, err)
	}
	// A, back on the thread, catches up on B's version.
	rec, err = storage.Session(ctx, st, "t/failover")
	if err != nil {
		t.Fatal(err)
	}
	sa, err := engA.Resume(rec)
	if err != nil {
		t.Fatal(err)
	}
	fm.Enqueue(fakemodel.Reply{Text: "Hello again."})
	if _, err := engA.Turn(context.Background(), sa, "hi", nil); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dirA, "outputs", s.ID, "docs", "x.md")); err != nil || string(data) != "# X\nbeta\n" {
		t.Fatalf("A's local file after B's edit: %q, %v", data, err)
	}
}

func TestOutputsFailoverBolt(t *testing.T) {
	st, err := bolt.Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	failover(t, st)
}

func TestOutputsFailoverPostgres(t *testing.T) {
	url := pgtest.URL(t)
	st, err := postgres.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	failover(t, st)
}

// A session from before documents lived in the store (testdata v1 holds
// product-brief.md only on disk) gets its document stored when it opens.
func TestOutputsLegacyStoredOnOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fixtures.CopyDir(t, filepath.Join(fixtures.RepoRoot(t), "storage", "bolt", "testdata", "v1"), dir)
	const id = "lgjnajbfftn7e"
	want, err := os.ReadFile(filepath.Join(dir, "outputs", id, "product-brief.md"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.OutputData(ctx, id, "product-brief.md", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("before opening: OutputData = %v, want not found (the test would prove nothing)", err)
	}
	fm := fakemodel.NewTB(t)
	cat := catalog.Load(catalog.Options{Bundles: []string{fixtures.Bundles(t)}})
	eng := engine.New(engine.Config{
		Catalog: func() *catalog.Catalog { return cat },
		Model: model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m",
			Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}),
		Store:      st,
		Outputs:    st,
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
		InputRoot:  func(id string) string { d, _ := st.InputDir(id); return d },
	})
	rec, err := st.SessionByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	latest := transcript.Latest(rec.Outputs)
	if len(latest) != 1 || latest[0].Path != "product-brief.md" {
		t.Fatalf("outputs %+v", rec.Outputs)
	}
	s, err := eng.Resume(rec)
	if err != nil {
		t.Fatal(err)
	}
	fm.Enqueue(fakemodel.Reply{Text: "Welcome back."})
	if _, err := eng.Turn(context.Background(), s, "where were we?", nil); err != nil {
		t.Fatal(err)
	}
	got := stored(t, st, id, "product-brief.md", latest[0].Version)
	if got != string(want) || !strings.Contains(got, "#") {
		t.Fatalf("stored %d bytes, want the local file's %d", len(got), len(want))
	}
}

// Catching up from the store never writes outside the output folder: a
// recorded path that is not local is skipped, a document found nowhere is
// logged, and the turn goes on.
func TestOutputsSyncBadPaths(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/bad", "product-lead")
	now := time.Now()
	s.Outputs = append(s.Outputs,
		transcript.Output{Path: "../evil.md", Version: 1, Size: 4, Time: now},
		transcript.Output{Path: "gone.md", Version: 1, Size: 4, Time: now},
		transcript.Output{Path: "ok.md", Version: 1, Size: 2, Time: now})
	if err := h.st.SaveSession(ctx, &s.Session); err != nil {
		t.Fatal(err)
	}
	for path, data := range map[string]string{"../evil.md": "evil", "ok.md": "ok"} {
		if err := h.st.PutOutput(ctx, s.ID, transcript.Output{Path: path, Version: 1}, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "Hello."})
	if res := h.turn(s, "hi"); res.Text != "Hello." {
		t.Fatalf("turn answered %q", res.Text)
	}
	dir, _ := h.st.OutputDir(s.ID)
	if _, err := os.Stat(filepath.Join(dir, "..", "evil.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a document was written outside the output folder: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "ok.md")); err != nil || string(data) != "ok" {
		t.Fatalf("ok.md: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("gone.md: %v", err)
	}
}
