// Package threadwork is the durable work of Slack threads, behind one
// Handler: inbound items are admitted into a thread's queue (acked once
// durable, deduplicated, ordered by Slack's clock), and one worker per
// thread drains it, one item at a time in order, while this replica holds
// the thread's lease (package lease), each item leaving the queue only
// after it was handled, with the posted marker in the same fenced write.
// It also decides how an item seen before a crash is replayed (Replay),
// keeps a turn's output record and its store failures (Keep, StoreFailed)
// under the thread's fence, and reads and writes the typed thread state
// (package threadstate) with the session.
//
// It knows nothing of Slack: an item is the handler's payload.
package threadwork

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"agentbot/bot/lease"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Store is what the durable work keeps in the store: the inbound queue,
// leases with their fenced writes, and the sessions' metadata (the thread
// state).
type Store interface {
	storage.Inbound
	storage.Leases
	storage.Fenced
	FindMeta(ctx context.Context, key string) (*transcript.Session, error)
	SetMeta(ctx context.Context, key, name, value string) error
}

// Handler handles the queued items of threads.
type Handler interface {
	// Handle handles item seq of the thread of key (its payload, as
	// admitted) under the thread's lease, which ctx carries (lease.Of);
	// ctx ends at shutdown or when the lease is lost. It reports whether
	// the item's answer went to the thread: the item is then marked
	// posted with its dequeue, so a replay after a crash posts nothing.
	Handle(ctx context.Context, key string, seq uint64, payload []byte) (posted bool)
}

// Observer is told the queue's depth and the duplicates admission drops.
type Observer interface {
	QueueDepth(n int)
	EventDeduped()
}

// Config configures a Work.
type Config struct {
	Store   Store
	Handler Handler
	// Fences fence the thread's writes (lease.Fences).
	Fences   *lease.Fences
	Replica  string
	LeaseTTL time.Duration
	// Sole says this replica is the only one working the store's threads
	// (bbolt: one process holds the database). Its leases are then taken
	// for lease.SoleTTL: they never lapse under a slow clock. LeaseTTL
	// still paces the queue scan.
	Sole bool
	// DedupeTTL is how long admission's dedupe keys are remembered.
	DedupeTTL time.Duration
	Observer  Observer
	Log       *slog.Logger
}

// Work is the durable work of the threads of one replica.
type Work struct {
	cfg Config
	// ctx ends the work in hand (Config's parent context).
	ctx      context.Context
	stopping atomic.Bool
	quit     chan struct{} // closed by Stop
	stopOnce sync.Once

	mu     sync.Mutex
	active map[string]*worker
	wg     sync.WaitGroup

	acks sync.WaitGroup // admissions waiting to be acked
	// admitting counts, per thread key, this replica's admissions not
	// committed yet: the part of a thread's queue the store does not show
	// yet (Live).
	admittingMu sync.Mutex
	admitting   map[string]int
}

// New returns the work of cfg; ctx is what items are handled under (it
// outlives the event loop at shutdown, so running turns can finish).
func New(ctx context.Context, cfg Config) *Work {
	w := &Work{cfg: cfg, ctx: ctx, quit: make(chan struct{}), active: map[string]*worker{}, admitting: map[string]int{}}
	return w
}

// SetHandler sets the handler of the items; it is set before any is
// admitted.
func (w *Work) SetHandler(h Handler) { w.cfg.Handler = h }

// Resume wakes the threads with items persisted before a restart.
func (w *Work) Resume() {
	keys, err := w.cfg.Store.PendingKeys(w.ctx)
	if err != nil {
		w.cfg.Log.Error("recover pending messages", "err", err)
		return
	}
	for _, k := range keys {
		w.Wake(k)
	}
	if len(keys) > 0 {
		w.cfg.Log.Info("resuming queued messages", "threads", len(keys))
	}
}

// Stop lets no new item start: running ones finish, queued ones wait for
// the next start (or another replica).
func (w *Work) Stop() {
	w.stopOnce.Do(func() {
		w.stopping.Store(true)
		close(w.quit)
	})
}

// Wait blocks until every worker (and the periodic loop) has finished.
func (w *Work) Wait() { w.wg.Wait() }

// WaitAdmissions blocks until every admission under way is acked or
// refused.
func (w *Work) WaitAdmissions() { w.acks.Wait() }

// leaseTTL is the time a lease is taken and renewed for (Config.Sole).
func (w *Work) leaseTTL() time.Duration {
	if w.cfg.Sole {
		return lease.SoleTTL
	}
	return w.cfg.LeaseTTL
}

// ended reports whether no new item may start.
func (w *Work) ended() bool { return w.ctx.Err() != nil || w.stopping.Load() }
