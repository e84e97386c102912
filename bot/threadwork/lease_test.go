package threadwork

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/bot/lease"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/storetest"
)

const testKey = "T1/C1/1700000000.000100"

// stallStore is a bbolt store whose lease renewals hang while stall is
// set, as a renewal does in a process short of CPU or behind a stalled
// store: it answers only when its context ends.
type stallStore struct {
	*bolt.Store
	stall   atomic.Bool
	renewed atomic.Int32 // renewals that reached the store
}

func (s *stallStore) RenewLease(ctx context.Context, f storage.Fence, ttl time.Duration) error {
	if s.stall.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	s.renewed.Add(1)
	return s.Store.RenewLease(ctx, f, ttl)
}

// handler records the items it is handed; first decides what the first
// call does with its context.
type handler struct {
	mu    sync.Mutex
	calls int
	first func(ctx context.Context)
}

func (h *handler) Handle(ctx context.Context, _ string, _ uint64, _ []byte) bool {
	h.mu.Lock()
	h.calls++
	n := h.calls
	h.mu.Unlock()
	if n == 1 && h.first != nil {
		h.first(ctx)
	}
	return ctx.Err() == nil
}

func (h *handler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

type nopObserver struct{}

func (nopObserver) QueueDepth(int) {}
func (nopObserver) EventDeduped()  {}

// newWork is a Work of replica "a" over a stallStore, with one item queued
// on testKey; no periodic scan runs, so only the work itself can pick a
// thread up again.
func newWork(t *testing.T, h Handler, ttl time.Duration, sole bool) (*Work, *stallStore) {
	t.Helper()
	ctx := context.Background()
	b, err := bolt.Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	st := &stallStore{Store: b}
	w := New(ctx, Config{Store: st, Handler: h, Fences: lease.NewFences(st), Replica: "a", LeaseTTL: ttl,
		Sole: sole, DedupeTTL: time.Minute, Observer: nopObserver{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { w.Stop(); w.Wait(); b.Close() })
	if _, err := storetest.Enqueue(ctx, st, testKey, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	return w, st
}

// waitDone waits until the thread's queue is empty.
func waitDone(t *testing.T, st storage.Inbound, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, _, ok, err := storage.Next(context.Background(), st, testKey); err == nil && !ok {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// A replica whose renewal did not come in time gives the thread up, its
// item in hand left queued, and takes the thread back at once, since no
// other replica holds it: it does not wait for a scan (none runs here).
func TestGivenUpThreadIsTakenBackAtOnce(t *testing.T) {
	const ttl = 300 * time.Millisecond
	h := &handler{}
	w, st := newWork(t, h, ttl, false)
	st.stall.Store(true)
	lost := make(chan struct{})
	h.first = func(ctx context.Context) {
		select {
		case <-ctx.Done(): // given up at half the TTL
			close(lost)
			st.stall.Store(false)
		case <-time.After(10 * ttl):
		}
	}
	w.Wake(testKey)
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("the lease was not given up while its renewal hung")
	}
	if !waitDone(t, st, 5*time.Second) {
		t.Fatalf("the item given up with the thread is still queued after 5 s (%d call(s)): the thread was not taken back", h.count())
	}
	if n := h.count(); n != 2 {
		t.Errorf("the item was handled %d times, want 2 (given up, then taken back)", n)
	}
}

// A sole replica (bbolt) keeps its thread however late its renewals come:
// the turn runs to its end over several lease times with every renewal
// hanging, its context never ends and its fence still holds in the store.
func TestSoleReplicaKeepsItsThreadWhenRenewalsHang(t *testing.T) {
	const ttl = 150 * time.Millisecond
	h := &handler{}
	w, st := newWork(t, h, ttl, true)
	st.stall.Store(true)
	var ended, guard atomic.Value
	h.first = func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-time.After(6 * ttl):
		}
		ended.Store(ctx.Err() != nil)
		guard.Store(errString(lease.Of(ctx).Guard()))
	}
	w.Wake(testKey)
	if !waitDone(t, st, 5*time.Second) {
		t.Fatal("the item is still queued")
	}
	if ended.Load() != false {
		t.Error("the sole replica's turn was cancelled: it gave its thread up")
	}
	if g := guard.Load(); g != "" {
		t.Errorf("the fence check failed after six lease times: %v", g)
	}
	if n := h.count(); n != 1 {
		t.Errorf("the item was handled %d times, want 1", n)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
