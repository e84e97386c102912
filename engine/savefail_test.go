package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// flakyStore fails SaveSession while down is set, as a database that went
// away does.
type flakyStore struct {
	engine.Store
	down atomic.Bool
}

func (f *flakyStore) SaveSession(ctx context.Context, s *transcript.Session) error {
	if f.down.Load() {
		return errors.New("connection refused")
	}
	return f.Store.SaveSession(ctx, s)
}

// TestFinalSaveFailureKeepsTheAnswer: when the store fails at the turn's
// last save, the turn still returns the answer, with a SaveError (not a
// model error); Save completes it once the store is back, and the
// transcript then holds the user's message and the answer.
func TestFinalSaveFailureKeepsTheAnswer(t *testing.T) {
	ctx := context.Background()
	var fs *flakyStore
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		fs = &flakyStore{Store: c.Store}
		c.Store = fs
	}})
	s, _ := h.start("T/C/1", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Text: "The answer"})
	down := func(ev engine.Event) {
		if ev.Kind == engine.EventText {
			fs.down.Store(true) // the store goes away while the answer streams
		}
	}
	res, err := h.eng.Turn(context.Background(), s, "question", down)
	var se *engine.SaveError
	if !errors.As(err, &se) {
		t.Fatalf("Turn error = %v, want a SaveError", err)
	}
	if res == nil || res.Text != "The answer" {
		t.Fatalf("result %+v, want the answer", res)
	}
	if err := h.eng.Save(context.Background(), s); err == nil {
		t.Fatal("Save succeeded while the store is down")
	}
	fs.down.Store(false)
	if err := h.eng.Save(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	got, err := storage.Session(ctx, h.st, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	n := len(got.Messages)
	if n < 2 || got.Messages[n-2].Content != "question" || got.Messages[n-1].Content != "The answer" {
		t.Fatalf("stored transcript ends %+v", got.Messages[max(0, n-2):])
	}
}
