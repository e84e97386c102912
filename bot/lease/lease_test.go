package lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/storetest"
)

const key = "T1/C1/1700000000.000100"

// hold opens a store, takes key's lease for replica a and holds it.
func hold(t *testing.T, ttl time.Duration) (*bolt.Store, *Fences, *Held) {
	ctx := context.Background()
	t.Helper()
	st, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f, ok, err := st.TakeLease(ctx, key, "a", ttl)
	if err != nil || !ok {
		t.Fatalf("take lease: %v %v", ok, err)
	}
	fences := NewFences(st)
	l := Hold(context.Background(), f, Config{Store: st, Fences: fences, TTL: ttl, Replica: "a",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	return st, fences, l
}

// session stores a session of the thread, as the engine's first save
// would.
func session(t *testing.T, st *bolt.Store) *transcript.Session {
	ctx := context.Background()
	t.Helper()
	s, err := st.NewSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A held lease is renewed past its TTL; its work finds it in the context;
// an item completes under it with its meta, and the output a save applies
// is dropped with it; on release another replica may take the thread.
func TestHeldLeaseRenewsCompletesAndReleases(t *testing.T) {
	ctx := context.Background()
	st, fences, l := hold(t, 300*time.Millisecond)
	if Of(l.Context()) != l || Of(context.Background()) != nil {
		t.Fatal("Of does not find the lease in its context only")
	}
	time.Sleep(700 * time.Millisecond) // over two TTLs: only renewals keep it
	if err := l.Guard(); err != nil || l.Context().Err() != nil {
		t.Fatalf("lease lost while renewed: %v, %v", err, l.Context().Err())
	}
	if ok, _ := storetest.Lease(ctx, st, key, "b", time.Second); ok {
		t.Fatal("another replica took a renewed lease")
	}
	s := session(t, st)
	fences.KeepOutput(key, func(s *transcript.Session) { s.SetMeta("out", "shown") })
	if err := fences.SaveSession(ctx, s); err != nil || s.Meta["out"] != "shown" {
		t.Fatalf("fenced save: %v, meta %v", err, s.Meta)
	}
	seq, err := storetest.Enqueue(ctx, st, key, []byte(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Complete(seq, func(context.Context) (map[string]string, error) { return map[string]string{"posted": "1"}, nil }); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if _, _, ok, _ := storage.Next(ctx, st, key); ok {
		t.Fatal("the completed item is still queued")
	}
	if rec, _ := st.FindMeta(ctx, key); rec == nil || rec.Meta["posted"] != "1" {
		t.Fatalf("the meta of the completion is not stored: %+v", rec)
	}
	delete(s.Meta, "out")
	if err := fences.SaveSession(ctx, s); err != nil || s.Meta["out"] != "" {
		t.Fatalf("the output is applied after its item completed: %v, %v", err, s.Meta)
	}
	l.Release()
	if ok, err := storetest.Lease(ctx, st, key, "b", time.Second); err != nil || !ok {
		t.Fatalf("the released lease was not free: %v %v", ok, err)
	}
}

// A lease another replica took over is lost at the next renewal: the
// context ends, Guard refuses, the fenced save and the completion are
// refused with ErrFenced, and the release leaves the new holder's lease.
func TestLostLeaseFencesEveryWrite(t *testing.T) {
	ctx := context.Background()
	st, fences, l := hold(t, 300*time.Millisecond)
	if err := st.ReleaseLease(ctx, key, "a"); err != nil { // as if it expired
		t.Fatal(err)
	}
	if _, ok, err := st.TakeLease(ctx, key, "b", time.Minute); err != nil || !ok {
		t.Fatalf("b takes the thread over: %v %v", ok, err)
	}
	select {
	case <-l.Context().Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the lease was not lost at the renewal")
	}
	if err := l.Guard(); err == nil {
		t.Fatal("Guard passes a lost lease")
	}
	s := session(t, st)
	if err := fences.SaveSession(ctx, s); !errors.Is(err, storage.ErrFenced) {
		t.Fatalf("save after the loss: %v, want ErrFenced", err)
	}
	seq, err := storetest.Enqueue(ctx, st, key, []byte(`{"text":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Complete(seq, func(context.Context) (map[string]string, error) { return nil, nil }); !errors.Is(err, storage.ErrFenced) {
		t.Fatalf("complete after the loss: %v, want ErrFenced", err)
	}
	if _, _, ok, _ := storage.Next(ctx, st, key); !ok {
		t.Fatal("a lost lease's completion dequeued the item")
	}
	l.Release()
	if ok, _ := storetest.Lease(ctx, st, key, "c", time.Second); ok {
		t.Fatal("the release of a lost lease freed the new holder's")
	}
}

// flakyChecks is a store whose fence checks fail (a connection reset)
// while fails is above zero.
type flakyChecks struct {
	*bolt.Store
	fails atomic.Int32
}

func (f *flakyChecks) CheckFence(ctx context.Context, fc storage.Fence) error {
	if f.fails.Add(-1) >= 0 {
		return errors.New("read tcp 127.0.0.1:5432: connection reset by peer")
	}
	return f.Store.CheckFence(ctx, fc)
}

// A fence check the store fails to answer is tried again while the lease
// holds: Guard lets the Slack call through once the store answers, and
// the lease is not lost (a refused call would leave an answer unposted).
// A write through Retry is tried again the same way.
func TestGuardAndRetryOutlastAPassingFault(t *testing.T) {
	st, _, l := hold(t, 3*time.Second)
	fl := &flakyChecks{Store: st}
	l.cfg.Store = fl
	l.checked = time.Time{} // the next call asks the store
	fl.fails.Store(3)
	if err := l.Guard(); err != nil {
		t.Fatalf("Guard refused after a passing fault: %v", err)
	}
	if n := fl.fails.Load(); n >= 0 {
		t.Fatalf("the check was not asked again (%d failures left)", n+1)
	}
	if l.Context().Err() != nil {
		t.Fatal("a passing fault lost the lease")
	}
	tries := 0
	err := l.Retry("write", func() error {
		if tries++; tries < 3 {
			return errors.New("conn closed")
		}
		return nil
	})
	if err != nil || tries != 3 {
		t.Fatalf("Retry: %v after %d tries, want success at the third", err, tries)
	}
	if err := l.Retry("write", func() error { return fmt.Errorf("save: %w", storage.ErrFenced) }); !errors.Is(err, storage.ErrFenced) {
		t.Fatalf("Retry of a fenced write: %v", err)
	}
	if l.Context().Err() == nil {
		t.Fatal("a fenced write did not lose the lease")
	}
	if err := l.Guard(); err == nil {
		t.Fatal("Guard passes after the lease was lost")
	}
}

// flakyRenewals is a store whose lease renewals fail (a connection reset)
// while fails is above zero.
type flakyRenewals struct {
	*bolt.Store
	fails atomic.Int32
}

func (f *flakyRenewals) RenewLease(ctx context.Context, fc storage.Fence, ttl time.Duration) error {
	if f.fails.Add(-1) >= 0 {
		return errors.New("write tcp 127.0.0.1:5432: connection reset by peer")
	}
	return f.Store.RenewLease(ctx, fc, ttl)
}

// One failed renewal does not cost the thread: it is tried again soon,
// before the give-up point (half the lease time), instead of at the next
// period, which comes after it.
func TestOneFailedRenewalKeepsTheLease(t *testing.T) {
	ctx := context.Background()
	st, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const ttl = 600 * time.Millisecond
	f, ok, err := st.TakeLease(ctx, key, "a", ttl)
	if err != nil || !ok {
		t.Fatalf("take lease: %v %v", ok, err)
	}
	fl := &flakyRenewals{Store: st}
	fl.fails.Store(1)
	l := Hold(context.Background(), f, Config{Store: fl, Fences: NewFences(st), TTL: ttl, Replica: "a",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer l.Release()
	time.Sleep(3 * ttl)
	if fl.fails.Load() >= 0 {
		t.Fatal("the renewal that fails was not tried")
	}
	if err := l.Context().Err(); err != nil {
		t.Fatalf("one failed renewal lost the lease: %v", err)
	}
	if ok, _ := storetest.Lease(ctx, st, key, "b", time.Second); ok {
		t.Fatal("another replica took the lease")
	}
}
