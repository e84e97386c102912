package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/transcript"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/storage/bolt"
)

// harness wires a real engine, store and model client to a fake model.
type harness struct {
	t   testing.TB
	fm  *fakemodel.Server
	st  *bolt.Store
	eng *engine.Engine
	cfg engine.Config
	cat *catalog.Catalog
	dir string

	mu     sync.Mutex
	events []engine.Event
}

type harnessOpts struct {
	bmad     []string
	skills   string
	mutate   func(*engine.Config)
	modelCfg func(*model.Config)
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	h := &harness{t: t, fm: fakemodel.NewTB(t), dir: t.TempDir()}
	st, err := bolt.Open(filepath.Join(h.dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h.st = st
	h.cat = catalog.Load(catalog.Options{Bundles: []string{fixtures.Bundles(t)}, BMADRoots: o.bmad, Skills: o.skills})
	mc := model.Config{APIKey: "fake-key", BaseURL: h.fm.URL(), Model: "fake-model",
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}
	if o.modelCfg != nil {
		o.modelCfg(&mc)
	}
	cfg := engine.Config{
		Catalog:    func() *catalog.Catalog { return h.cat },
		Model:      model.New(mc),
		Store:      st,
		Outputs:    st,
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
		InputRoot:  func(id string) string { d, _ := st.InputDir(id); return d },
		Now:        func() time.Time { return time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC) },
	}
	if o.mutate != nil {
		o.mutate(&cfg)
	}
	h.cfg = cfg
	h.eng = engine.New(cfg)
	return h
}

func (h *harness) agent(id string) *catalog.Agent {
	h.t.Helper()
	a, ok := h.cat.Find(id)
	if !ok {
		h.t.Fatalf("agent %s not found; problems: %+v", id, h.cat.Problems)
	}
	return a
}

func (h *harness) start(key, agentID string) (*engine.Session, *engine.Greeting) {
	ctx := context.Background()
	h.t.Helper()
	s, err := live(h.st.NewSession(ctx, key))
	if err != nil {
		h.t.Fatal(err)
	}
	g, err := h.eng.Activate(context.Background(), s, h.agent(agentID))
	if err != nil {
		h.t.Fatalf("activate %s: %v", agentID, err)
	}
	return s, g
}

func (h *harness) emit(ev engine.Event) {
	h.mu.Lock()
	h.events = append(h.events, ev)
	h.mu.Unlock()
}

func (h *harness) turn(s *engine.Session, input string) *engine.Result {
	h.t.Helper()
	res, err := h.eng.Turn(context.Background(), s, input, h.emit)
	if err != nil {
		h.t.Fatalf("turn %q: %v", input, err)
	}
	return res
}

func (h *harness) eventsOf(kind engine.EventKind) []engine.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []engine.Event
	for _, ev := range h.events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// toolResults returns the decoded tool results of a recorded request.
func toolResults(t testing.TB, req fakemodel.Request) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range req.Messages {
		if m.Role != transcript.RoleTool {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
			t.Fatalf("tool result is not JSON: %q", m.Content)
		}
		out = append(out, r)
	}
	return out
}

func call(name string, args any) fakemodel.ToolCall {
	b, _ := json.Marshal(args)
	return fakemodel.ToolCall{Name: name, Arguments: string(b)}
}

func contains(t testing.TB, s, sub, what string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%s: %q not found in:\n%.2000s", what, sub, s)
	}
}

// live wraps a stored session the store just created as an engine session.
func live(rec *transcript.Session, err error) (*engine.Session, error) {
	if err != nil {
		return nil, err
	}
	return &engine.Session{Session: *rec}, nil
}
