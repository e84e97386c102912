// Package lease holds a thread's lease for the replica that works the
// thread, and fences that replica's writes with it.
//
// Replicas: several bots may share one store. Slack hands each event to
// one of the app's connections, so any replica may admit any thread's
// message; a thread's queue is worked by one replica at a time, the holder
// of the thread's lease in the store, which renews it every TTL/3. A
// replica that dies leaves its lease to expire; the periodic scan of the
// other replicas then takes the thread over and resumes the turn from the
// transcript, and the posted marker keeps an answer that was posted from
// being posted again.
//
// Fencing: a thread's lease carries a token (storage.Fence). Every write
// the replica makes for a thread it works is checked against it: the
// transcript saves of its turns (Fences, the engine's store), the posted
// marker with the dequeue (Held.Complete), the turn's output record, and
// every Slack call of its reply (Held.Guard). A replica that lost the
// thread (frozen past its lease, cut off from the store) writes nothing,
// in the store or in Slack.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"agentbot/engine/retry"
	"agentbot/storage"
)

// DefaultTTL is the lease time a bot uses when it is given none.
const DefaultTTL = 15 * time.Second

// SoleTTL is the lease time of a replica that is the only one working its
// store's threads (bbolt, whose database one process holds): no replica
// can take a thread over from it, so its leases do not expire while it
// runs (a restart clears them) and a process short of CPU, whose renewal
// comes late, never gives a thread up to nobody.
const SoleTTL = 10 * 365 * 24 * time.Hour

// NewReplicaID is hostname-pid-random: unique per bot, readable in logs.
func NewReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "agentbot"
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// Store is what a held lease needs of the store: renew, check and release
// the lease, and the fenced writes.
type Store interface {
	storage.Fenced
	RenewLease(ctx context.Context, f storage.Fence, ttl time.Duration) error
	CheckFence(ctx context.Context, f storage.Fence) error
	ReleaseLease(ctx context.Context, key, holder string) error
}

// Config is what Hold needs: the store, the process's fences, the lease
// time, this replica's name and the log.
type Config struct {
	Store   Store
	Fences  *Fences
	TTL     time.Duration
	Replica string
	Log     *slog.Logger
}

// Held is a thread lease this replica holds, renewed in the background
// until it is released or lost. Its context ends when it is lost (or when
// the parent ends, at shutdown): the thread's running turn is cancelled
// with it, and its writes are fenced.
type Held struct {
	cfg    Config
	key    string
	fence  storage.Fence
	ctx    context.Context
	cancel context.CancelFunc
	lost   atomic.Bool
	done   chan struct{}
	// keep is set when the item in hand could not be stored: it stays
	// queued, tried again once the store is back.
	keep atomic.Bool
	// again is set when the item in hand stays queued because items went
	// before it: the queue is read again at once (Again).
	again atomic.Bool

	checkMu sync.Mutex
	checked time.Time // the last fence check the store passed
}

// heldKey is the context key of the lease a thread's work runs under.
type heldKey struct{}

// Of returns the lease ctx's work runs under, or nil.
func Of(ctx context.Context) *Held {
	l, _ := ctx.Value(heldKey{}).(*Held)
	return l
}

// Hold starts renewing lease f, just taken; its context is a child of
// parent that Of finds the lease in.
func Hold(parent context.Context, f storage.Fence, cfg Config) *Held {
	l := &Held{cfg: cfg, key: f.Key, fence: f, done: make(chan struct{}), checked: time.Now()}
	ctx, cancel := context.WithCancel(parent)
	l.ctx, l.cancel = context.WithValue(ctx, heldKey{}, l), cancel
	cfg.Fences.hold(f)
	go l.renew()
	return l
}

// Context is the context of the thread's work: it ends when the lease is
// lost.
func (l *Held) Context() context.Context { return l.ctx }

// Fence is the lease's fence token.
func (l *Held) Fence() storage.Fence { return l.fence }

// Keep marks the item in hand as not done: it stays queued.
func (l *Held) Keep() { l.keep.Store(true) }

// Kept reports whether Keep was called.
func (l *Held) Kept() bool { return l.keep.Load() }

// Lost reports whether the lease was lost (given up for a renewal that
// did not come in time, or fenced), rather than ended by its parent
// context or released.
func (l *Held) Lost() bool { return l.lost.Load() }

// Again marks the item in hand as not done because items were queued
// before it: it stays queued, and the queue is read again at once.
func (l *Held) Again() { l.again.Store(true) }

// TakeAgain reports whether Again was called for the item in hand, and
// clears it for the next one.
func (l *Held) TakeAgain() bool { return l.again.Swap(false) }

// renew renews the lease every TTL/3. When another replica holds it (or
// it expired: a renewal never takes a lease back), or renewals failed for
// half the TTL (so the lease may expire before the next one), the lease
// is lost: ctx is cancelled, before another replica can take the thread
// over. A renewal waits for the store only until that point.
func (l *Held) renew() {
	defer close(l.done)
	ttl := l.cfg.TTL
	last := time.Now()
	next := ttl / 3
	for {
		if retry.Sleep(l.ctx, next) != nil {
			return
		}
		err := l.renewOnce(last.Add(ttl / 2))
		switch {
		case err == nil:
			last, next = time.Now(), ttl/3
			continue
		case errors.Is(err, storage.ErrFenced):
			l.lose("thread lease lost: it expired or another replica took the thread over")
		case time.Since(last) < ttl/2:
			// A renewal that failed (a connection reset) is tried again
			// soon, not at the next period, which would come after the
			// give-up point: one blip must not cost the thread.
			l.cfg.Log.Warn("renew thread lease", "thread", l.key, "err", err)
			next = renewRetry(ttl)
			continue
		default:
			l.cfg.Log.Error("thread lease not renewed in time: giving the thread up", "thread", l.key, "err", err)
			l.lose("")
		}
		return
	}
}

// renewRetry is the pause before a failed renewal is tried again: a
// twentieth of the lease time, at least 10 ms and at most 250 ms, so
// several tries fit before the give-up point at half of it.
func renewRetry(ttl time.Duration) time.Duration {
	return min(max(ttl/20, 10*time.Millisecond), 250*time.Millisecond)
}

// renewOnce renews the lease, waiting for the store at most until
// giveUp: a store that stalls never holds the thread past the point where
// another replica may take it over.
func (l *Held) renewOnce(giveUp time.Time) error {
	ctx, cancel := context.WithDeadline(l.ctx, giveUp)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.cfg.Store.RenewLease(ctx, l.fence, l.cfg.TTL) }()
	t := time.NewTimer(time.Until(giveUp))
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errors.New("the store did not answer the renewal in time")
	case <-l.ctx.Done():
		return l.ctx.Err()
	}
}

// lose gives the thread up: ctx ends and nothing more is written for it.
// The stale fence stays in place until release, so a save the turn makes
// before it notices is refused (ErrFenced) rather than made unfenced.
func (l *Held) lose(why string) {
	if l.lost.Swap(true) {
		return
	}
	if why != "" {
		l.cfg.Log.Warn(why, "thread", l.key, "replica", l.cfg.Replica)
	}
	l.cancel()
}

// Release stops renewing and, unless the lease was lost, gives it up.
func (l *Held) Release() {
	l.cancel()
	<-l.done
	l.cfg.Fences.drop(l.fence)
	if l.lost.Load() {
		return
	}
	// Given up although its context just ended: another replica need not
	// wait for it to expire.
	if err := l.cfg.Store.ReleaseLease(context.WithoutCancel(l.ctx), l.key, l.cfg.Replica); err != nil {
		l.cfg.Log.Warn("release thread lease", "thread", l.key, "err", err) // it expires
	}
}
