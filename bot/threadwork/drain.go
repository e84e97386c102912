package threadwork

import (
	"context"
	"time"

	"agentbot/bot/lease"
	"agentbot/bot/threadstate"
	"agentbot/storage"
)

// One worker runs per thread with queued items: items of a thread are
// handled one at a time, in order; different threads run in parallel. A
// worker works a thread only while it holds the thread's lease, so
// replicas sharing the store never work one thread at once.

type worker struct {
	// kicked is set when new work arrives while the worker runs, so it
	// looks at the queue again before it exits.
	kicked bool
}

// Wake makes sure a worker drains the queue of key.
func (w *Work) Wake(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wk, ok := w.active[key]; ok {
		wk.kicked = true
		return
	}
	w.startLocked(key)
}

// wakeIdle starts a worker for key unless one runs already.
func (w *Work) wakeIdle(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.active[key]; !ok {
		w.startLocked(key)
	}
}

// startLocked starts a worker for key; w.mu must be held.
func (w *Work) startLocked(key string) {
	wk := &worker{}
	w.active[key] = wk
	w.cfg.Observer.QueueDepth(len(w.active))
	w.wg.Add(1)
	go w.run(key, wk)
}

func (w *Work) run(key string, wk *worker) {
	defer w.wg.Done()
	wait := retryFirst
	for {
		w.mu.Lock()
		wk.kicked = false
		w.mu.Unlock()
		if w.drain(key) == drainRetry {
			// The store failed under an item: try it again soon, sooner
			// than the scan, while the store may be back already.
			if w.retryWait(wait) {
				wait = min(2*wait, w.ScanInterval())
				continue
			}
		} else {
			wait = retryFirst
		}
		w.mu.Lock()
		if !wk.kicked || w.ended() {
			delete(w.active, key)
			w.cfg.Observer.QueueDepth(len(w.active))
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}

// retryWait waits d before a thread is drained again; it reports false
// when the work stops first.
func (w *Work) retryWait(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return !w.stopping.Load()
	case <-w.ctx.Done():
	case <-w.quit:
	}
	return false
}

// drain handles the thread's queued items, oldest first, while this
// replica holds the thread's lease; without it, another replica works the
// thread and drain leaves it. An item leaves the queue only after it was
// handled, so a crash replays it. At shutdown no new item starts; the queue
// waits for the next start (or another replica).
func (w *Work) drain(key string) drained {
	for !w.ended() {
		f, ok, err := w.cfg.Store.TakeLease(w.ctx, key, w.cfg.Replica, w.leaseTTL())
		if err != nil {
			w.cfg.Log.Error("take thread lease", "err", err)
			return drainRetry
		}
		if !ok {
			return drainLeft // another replica works this thread
		}
		switch d := w.drainLeased(f); d {
		case drainLost:
			// The lease was lost and the item in hand left queued: take
			// the thread back at once if nobody holds it (this replica
			// gave it up for a renewal that came late, or it lapsed and
			// no replica took it); TakeLease refuses while another
			// replica's lease is live.
			w.cfg.Log.Info("thread lease lost; taking the thread back unless another replica holds it", "thread", key)
			continue
		case drainEmpty:
		default:
			return d
		}
		// The lease is released with the queue empty. An item another
		// replica queued in between found the lease taken: look again, so
		// it does not wait for the scan.
		if _, _, ok, err := storage.Next(w.ctx, w.cfg.Store, key); err != nil || !ok {
			return drainEmpty
		}
	}
	return drainLeft
}

// drained is how a drain of a thread's queue ended.
type drained int

const (
	// drainEmpty: the queue is empty.
	drainEmpty drained = iota
	// drainLeft: the thread is left to another replica (the lease was
	// taken or lost), or to the next start (shutdown).
	drainLeft
	// drainRetry: the store failed under an item, which stays queued, to
	// be tried again soon.
	drainRetry
	// drainLost: the lease was lost (not at shutdown): the thread is
	// taken back unless another replica holds it.
	drainLost
)

// retryFirst is the first wait before a thread whose store failed is
// drained again; it doubles up to the scan's interval.
const retryFirst = 200 * time.Millisecond

// ScanInterval is how often queued threads are scanned (StartPeriodic).
func (w *Work) ScanInterval() time.Duration { return max(w.cfg.LeaseTTL/3, retryFirst) }

// drainLeased drains the queue under a lease just taken, and releases the
// lease unless it was lost; it reports how it stopped.
func (w *Work) drainLeased(f storage.Fence) drained {
	key := f.Key
	l := lease.Hold(w.ctx, f, lease.Config{Store: w.cfg.Store, Fences: w.cfg.Fences,
		TTL: w.leaseTTL(), Replica: w.cfg.Replica, Log: w.cfg.Log})
	defer l.Release()
	left := func() drained {
		if l.Lost() && !w.ended() {
			return drainLost
		}
		return drainLeft
	}
	for l.Context().Err() == nil && !w.stopping.Load() {
		seq, payload, ok, err := storage.Next(l.Context(), w.cfg.Store, key)
		if err != nil {
			w.cfg.Log.Error("read queue", "err", err)
			return drainRetry
		}
		if !ok {
			return drainEmpty
		}
		posted := w.cfg.Handler.Handle(l.Context(), key, seq, payload)
		if l.Context().Err() != nil {
			// Cancelled at shutdown, or the lease was lost: keep the item
			// for the restart, the replica that holds the thread now, or
			// this one when it takes the thread back.
			return left()
		}
		if l.Kept() {
			return drainRetry // it could not be stored: it stays queued
		}
		if l.TakeAgain() {
			continue // items went before it in the queue: they come first (Again)
		}
		// The posted marker and the dequeue are one fenced write: a
		// replica that lost the thread changes neither.
		if err := l.Complete(seq, func(ctx context.Context) (map[string]string, error) { return w.postedMeta(ctx, l, seq, posted) }); err != nil {
			w.cfg.Log.Error("dequeue", "err", err)
			return drainRetry
		}
	}
	return left()
}

// postedMeta is the session meta that marks item seq posted: the thread
// state with Posted set (read from the store: under the lease only this
// replica writes it), and the output record cleared. None when nothing
// was posted, or the thread has no session.
func (w *Work) postedMeta(ctx context.Context, l *lease.Held, seq uint64, posted bool) (map[string]string, error) {
	if !posted {
		return nil, nil
	}
	rec, err := w.cfg.Store.FindMeta(ctx, l.Fence().Key)
	if err != nil || rec == nil {
		return nil, err
	}
	st, err := threadstate.Of(rec)
	if err != nil {
		w.cfg.Log.Warn("unreadable thread state left out", "err", err)
	}
	st.Posted, st.Output = seq, nil
	meta := map[string]string{threadstate.MetaKey: st.Encode()}
	for _, k := range threadstate.OldMetaKeys {
		meta[k] = ""
	}
	return meta, nil
}
