package bot

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"agentbot/storage"
)

// threads runs one worker per thread with queued items: turns of a thread
// run one at a time, in order; different threads run in parallel. A worker
// works a thread only while it holds the thread's lease (package lease), so
// replicas sharing the store never work one thread at once.
type threads struct {
	b      *Bot
	mu     sync.Mutex
	active map[string]*worker
	wg     sync.WaitGroup
}

type worker struct {
	// kicked is set when new work arrives while the worker runs, so it
	// looks at the queue again before it exits.
	kicked bool
}

func newThreads(b *Bot) *threads { return &threads{b: b, active: map[string]*worker{}} }

// wake makes sure a worker drains the queue of key.
func (t *threads) wake(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.active[key]; ok {
		w.kicked = true
		return
	}
	t.startLocked(key)
}

// wakeIdle starts a worker for key unless one runs already.
func (t *threads) wakeIdle(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.active[key]; !ok {
		t.startLocked(key)
	}
}

// startLocked starts a worker for key; t.mu must be held.
func (t *threads) startLocked(key string) {
	w := &worker{}
	t.active[key] = w
	t.b.obs.QueueDepth(len(t.active))
	t.wg.Add(1)
	go t.run(key, w)
}

// wait blocks until every worker has finished.
func (t *threads) wait() { t.wg.Wait() }

func (t *threads) run(key string, w *worker) {
	defer t.wg.Done()
	wait := retryFirst
	for {
		t.mu.Lock()
		w.kicked = false
		t.mu.Unlock()
		if t.drain(key) == drainRetry {
			// The store failed under an item: try it again soon, sooner
			// than the scan, while the store may be back already.
			if t.retryWait(wait) {
				wait = min(2*wait, t.b.scanInterval())
				continue
			}
		} else {
			wait = retryFirst
		}
		t.mu.Lock()
		if !w.kicked || t.b.turnCtx.Err() != nil || t.b.stopping.Load() {
			delete(t.active, key)
			t.b.obs.QueueDepth(len(t.active))
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
}

// retryWait waits d before a thread is drained again; it reports false
// when the bot stops first.
func (t *threads) retryWait(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return !t.b.stopping.Load()
	case <-t.b.turnCtx.Done():
	case <-t.b.quit:
	}
	return false
}

// drain handles the thread's queued items, oldest first, while this
// replica holds the thread's lease; without it, another replica works the
// thread and drain leaves it. An item leaves the queue only after it was
// handled, so a crash replays it. At shutdown no new item starts; the queue
// waits for the next start (or another replica).
func (t *threads) drain(key string) drained {
	b := t.b
	for b.turnCtx.Err() == nil && !b.stopping.Load() {
		f, ok, err := b.cfg.Store.TakeLease(context.TODO(), key, b.cfg.ReplicaID, b.cfg.LeaseTTL)
		if err != nil {
			b.log.Error("take thread lease", "err", err)
			return drainRetry
		}
		if !ok {
			return drainLeft // another replica works this thread
		}
		if d := t.drainLeased(f); d != drainEmpty {
			return d
		}
		// The lease is released with the queue empty. An item another
		// replica queued in between found the lease taken: look again, so
		// it does not wait for the scan.
		if _, _, ok, err := storage.Next(context.TODO(), b.cfg.Store, key); err != nil || !ok {
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
)

// retryFirst is the first wait before a thread whose store failed is
// drained again; it doubles up to the scan's interval.
const retryFirst = 200 * time.Millisecond

// scanInterval is how often queued threads are scanned (startPeriodic).
func (b *Bot) scanInterval() time.Duration { return max(b.cfg.LeaseTTL/3, retryFirst) }

// drainLeased drains the queue under a lease just taken, and releases the
// lease unless it was lost; it reports how it stopped.
func (t *threads) drainLeased(f storage.Fence) drained {
	b, key := t.b, f.Key
	l := b.holdLease(f)
	defer l.Release()
	for l.Context().Err() == nil && !b.stopping.Load() {
		seq, payload, ok, err := storage.Next(context.TODO(), b.cfg.Store, key)
		if err != nil {
			b.log.Error("read queue", "err", err)
			return drainRetry
		}
		if !ok {
			return drainEmpty
		}
		var it item
		err = json.Unmarshal(payload, &it)
		readable := err == nil
		if readable {
			b.process(l.Context(), seq, it)
		} else {
			b.log.Error("drop unreadable queued item", "seq", seq, "err", err)
		}
		if l.Context().Err() != nil {
			// Cancelled at shutdown, or the lease was lost: keep the item
			// for the restart or the replica that holds the thread now.
			return drainLeft
		}
		if l.Kept() {
			return drainRetry // it could not be stored: it stays queued
		}
		// The posted marker and the dequeue are one fenced write: a
		// replica that lost the thread changes neither.
		if err := b.complete(l, seq, readable && itemHandlers[it.Kind].conversation); err != nil {
			b.log.Error("dequeue", "err", err)
			return drainRetry
		}
	}
	return drainLeft
}
