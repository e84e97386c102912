package threadwork

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"agentbot/bot/lease"
	"agentbot/bot/threadstate"
	"agentbot/engine"
	"agentbot/engine/retry"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// A turn under a thread's lease: its Slack writes ask the fence first
// (Guard), its output record is kept under the fence (RecordOutput), and
// an item whose store failed stays queued (Keep, RetryLater,
// StoreFailed).

// Guard asks the fence of the thread lease ctx carries, if any, before a
// Slack write (lease.Held.Guard).
func Guard(ctx context.Context) error {
	if l := lease.Of(ctx); l != nil {
		if err := l.Guard(); err != nil {
			return fmt.Errorf("not posted: this replica no longer holds the thread: %w", err)
		}
	}
	return nil
}

// Leased reports whether ctx carries a thread's lease.
func Leased(ctx context.Context) bool { return lease.Of(ctx) != nil }

// Kept reports whether the item in hand stays queued for the store.
func Kept(ctx context.Context) bool {
	l := lease.Of(ctx)
	return l != nil && l.Kept()
}

// Keep keeps the item in hand queued, to be tried again once the store
// answers, when it is worked under a lease; it reports whether it did.
func Keep(ctx context.Context) bool {
	l := lease.Of(ctx)
	if l == nil {
		return false
	}
	l.Keep()
	return true
}

// RetryLater keeps the item in hand queued, tried again once the store is
// back, when err is the store's (a session that could not be loaded or
// stored) and the item is worked under a lease; it reports whether it
// did. Nothing is posted: the message is not lost, only late.
func RetryLater(ctx context.Context, err error) bool {
	if errors.Is(err, storage.ErrExists) {
		return false
	}
	if _, ok := errors.AsType[*engine.SaveError](err); !ok {
		return false
	}
	return Keep(ctx)
}

// StoreFailed handles a turn that could not store its session: the store,
// not the model, failed. When the answer (text) was generated it is shown
// (the error is dropped) and the session is stored again (save) until it
// is, while the lease holds; otherwise the item stays queued, tried again
// once the store is back, so no message is dropped. It returns the error
// the reply shows.
func (w *Work) StoreFailed(ctx context.Context, s *transcript.Session, text string, err error, save func() error) error {
	var se *engine.SaveError
	if !errors.As(err, &se) {
		return err
	}
	if strings.TrimSpace(text) == "" {
		Keep(ctx)
		return err
	}
	w.cfg.Log.Warn("the answer could not be stored; storing it again", "session", s.ID, "err", err)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		if retry.Sleep(ctx, wait) != nil {
			Keep(ctx) // not stored: the item is not done
			return nil
		}
		if err := save(); err == nil {
			return nil
		}
	}
}

// RecordOutput keeps a turn's output record (what item seq's turn showed)
// under the thread's fence. It is stored before the reply's next Slack
// call (tried again after a passing fault while the lease holds; a lost
// lease refuses that call), so a run that resumes the turn always knows
// what this one showed.
func (w *Work) RecordOutput(ctx context.Context, key string, seq uint64, shown threadstate.Shown) {
	l := lease.Of(ctx)
	if l == nil {
		return
	}
	to := threadstate.Output{Seq: seq, Shown: shown}
	w.cfg.Fences.KeepOutput(key, func(s *transcript.Session) {
		st, _ := threadstate.Of(s) // unreadable parts were logged where read
		o := to
		st.Output = &o
		threadstate.Put(s, st)
	})
	// Stored even when the turn is cancelled (its lease lost, a shutdown):
	// what it showed is shown, and the fence decides whether it may write.
	ctx = context.WithoutCancel(ctx)
	err := l.Retry("record the turn's output", func() error {
		rec, err := w.cfg.Store.FindMeta(ctx, key)
		if err != nil || rec == nil {
			return err
		}
		st, _ := threadstate.Of(rec)
		st.Output = &to
		return w.cfg.Store.CompleteFenced(ctx, l.Fence(), 0, map[string]string{threadstate.MetaKey: st.Encode()})
	})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		w.cfg.Log.Warn("record the turn's output", "thread", key, "err", err)
	}
}

// GuardOf is the fence check of the thread lease ctx carries
// (lease.Held.Guard), or nil without one.
func GuardOf(ctx context.Context) func() error {
	if l := lease.Of(ctx); l != nil {
		return l.Guard
	}
	return nil
}
