package threadwork

import (
	"context"
	"fmt"

	"agentbot/bot/lease"
	"agentbot/storage"
)

// Admit persists an item (payload) in the queue of the thread of key at
// order (storage.OrderOf of Slack's time of it; 0: the time of
// admission), unless one of its dedupe keys was seen before, acks it, and
// wakes its thread once committed. With a journaled store (bbolt), it is
// acked once it is fsynced in the store's journal: a crash after the ack
// cannot lose it. Otherwise (PostgreSQL) it is acked when the commit is
// done. An item that cannot be persisted is not acked (Slack delivers it
// again): unsaved is told why.
func (w *Work) Admit(key string, order int64, dedupe []string, payload []byte, ack func(), unsaved func(error)) {
	w.acks.Add(1)
	// Until the commit, the store does not show the item queued: a reply
	// right behind it asks here (Live).
	w.admittingAdd(key, 1)
	journaled, done := w.cfg.Store.Admit(w.ctx, order, dedupe, w.cfg.DedupeTTL, key, payload)
	if journaled != nil {
		go func() {
			defer w.acks.Done()
			defer w.admittingAdd(key, -1)
			if err := <-journaled; err != nil {
				unsaved(err) // not on disk: not acked
				return
			}
			ack()
			w.admitted(key, <-done, ack, unsaved, true)
		}()
		return
	}
	go func() {
		defer w.acks.Done()
		defer w.admittingAdd(key, -1)
		w.admitted(key, <-done, ack, unsaved, false)
	}()
}

// AdmitNow persists an item of the thread of key that its handler found
// missing from the queue (a message of the thread's unanswered gap), as
// Admit does, and waits for the commit; dup reports that one of its
// dedupe keys was seen before, so it was admitted already.
func (w *Work) AdmitNow(ctx context.Context, key string, order int64, dedupe []string, payload []byte) (dup bool, err error) {
	_, done := w.cfg.Store.Admit(ctx, order, dedupe, w.cfg.DedupeTTL, key, payload)
	select {
	case a := <-done:
		return a.Dup, a.Err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Again keeps the item in hand queued because the handler queued items
// that go before it (AdmitNow): the thread's queue is read again at once,
// so they are handled first. It reports false without a lease.
func Again(ctx context.Context) bool {
	l := lease.Of(ctx)
	if l == nil {
		return false
	}
	l.Again()
	return true
}

// admitted wakes the thread of a committed item; a duplicate is dropped.
// journaled says whether it was journaled (and acked) before its commit.
func (w *Work) admitted(key string, a storage.Admission, ack func(), unsaved func(error), journaled bool) {
	if a.Err != nil {
		if journaled {
			w.cfg.Log.Error("commit inbound message; it is replayed from the journal at the next start", "err", a.Err)
		} else {
			unsaved(a.Err)
		}
		return
	}
	ack()
	if a.Dup {
		w.cfg.Observer.EventDeduped()
		return
	}
	w.Wake(key)
}

// Live reports whether the thread of key has a session or is about to
// have one: an item of it is being admitted here, or is queued (its
// handler creates the session when it opens it, before the item leaves
// the queue). So a reply written right after the mention that starts the
// thread is queued behind it, not dropped. After a first look at the
// session, the states are looked at in the order a thread goes through
// them, and each begins before the one before it ends: a thread moving on
// meanwhile is still seen.
func (w *Work) Live(ctx context.Context, key string) (bool, error) {
	if ok, err := storage.HasSession(ctx, w.cfg.Store, key); err != nil || ok {
		return ok, wrapErr("look up thread session", err)
	}
	if w.admittingThread(key) {
		return true, nil
	}
	if _, _, ok, err := storage.Next(ctx, w.cfg.Store, key); err != nil || ok {
		return ok, wrapErr("look up thread queue", err)
	}
	ok, err := storage.HasSession(ctx, w.cfg.Store, key)
	return ok, wrapErr("look up thread session", err)
}

// wrapErr is err with what failed, or nil.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

// admittingThread reports whether an admission of the thread of key is
// under way on this replica.
func (w *Work) admittingThread(key string) bool {
	w.admittingMu.Lock()
	defer w.admittingMu.Unlock()
	return w.admitting[key] > 0
}

// admittingAdd counts n admissions of key under way (n < 0: ended).
func (w *Work) admittingAdd(key string, n int) {
	w.admittingMu.Lock()
	defer w.admittingMu.Unlock()
	if w.admitting[key] += n; w.admitting[key] <= 0 {
		delete(w.admitting, key)
	}
}
