package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/transcript"
)

// stallingStore stalls SaveSession while stall is set, until the caller's
// context is done, as a database that stopped answering does under a
// driver that honours the context. entered hears of each stalled save,
// seen of the context error it ended with.
type stallingStore struct {
	engine.Store
	stall   atomic.Bool
	entered chan struct{}
	seen    chan error
}

func (f *stallingStore) SaveSession(ctx context.Context, s *transcript.Session) error {
	if !f.stall.Load() {
		return f.Store.SaveSession(ctx, s)
	}
	select {
	case f.entered <- struct{}{}:
	default:
	}
	<-ctx.Done()
	select {
	case f.seen <- ctx.Err():
	default:
	}
	return ctx.Err()
}

// TestCancelReachesStalledSave: a turn cancelled while the store stalls
// on its save returns, with the cancellation (not a store failure), and
// the store saw the turn's context end.
func TestCancelReachesStalledSave(t *testing.T) {
	ctx := context.Background()
	var fs *stallingStore
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		fs = &stallingStore{Store: c.Store, entered: make(chan struct{}, 1), seen: make(chan error, 1)}
		c.Store = fs
	}})
	c, err := h.eng.Open(ctx, h.st, "T/C/stall")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, h.agent("product-lead"), nil); err != nil {
		t.Fatal(err)
	}

	fs.stall.Store(true)
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.Run(turnCtx, "question", nil, nil)
		done <- err
	}()
	select {
	case <-fs.entered:
	case err := <-done:
		t.Fatalf("Run returned before the store stalled: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never saved")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run error = %v, want context.Canceled", err)
		}
		var se *engine.SaveError
		if errors.As(err, &se) {
			t.Fatalf("Run error = %v: a cancel is not a store failure", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the cancel: the store never heard of it")
	}
	if err := <-fs.seen; !errors.Is(err, context.Canceled) {
		t.Fatalf("SaveSession ended with %v, want context.Canceled", err)
	}
}
