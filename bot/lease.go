package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"agentbot/storage"
)

// Replicas: several bots may share one store. Slack hands each event to one
// of the app's connections, so any replica may admit any thread's message;
// a thread's queue is worked by one replica at a time, the holder of the
// thread's lease in the store, which renews it every LeaseTTL/3. A replica
// that dies leaves its lease to expire; the periodic scan of the other
// replicas then takes the thread over and resumes the turn from the
// transcript (threadState.Seq), and threadState.Posted keeps an answer that
// was posted from being posted again.

// defaultLeaseTTL is Config.LeaseTTL's default.
const defaultLeaseTTL = 15 * time.Second

// leaseDefaults fills in ReplicaID and LeaseTTL.
func (c *Config) leaseDefaults() {
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = defaultLeaseTTL
	}
	if c.ReplicaID == "" {
		c.ReplicaID = defaultReplicaID()
	}
}

// defaultReplicaID is hostname-pid-random: unique per Bot, readable in logs.
func defaultReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "agentbot"
	}
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(r[:]))
}

// heldLease is a thread lease this replica holds, renewed in the
// background until it is released or lost. ctx ends when it is lost (or at
// shutdown): the thread's running turn is cancelled with it, and its
// writes are fenced (fence.go).
type heldLease struct {
	b      *Bot
	key    string
	fence  storage.Fence
	ctx    context.Context
	cancel context.CancelFunc
	lost   atomic.Bool
	done   chan struct{}
	// keep is set when the item in hand could not be stored: it stays
	// queued, tried again once the store is back.
	keep atomic.Bool

	checkMu sync.Mutex
	checked time.Time // the last fence check the store passed
}

// holdLease starts renewing a lease just taken.
func (b *Bot) holdLease(f storage.Fence) *heldLease {
	l := &heldLease{b: b, key: f.Key, fence: f, done: make(chan struct{}), checked: time.Now()}
	ctx, cancel := context.WithCancel(b.turnCtx)
	l.ctx, l.cancel = context.WithValue(ctx, leaseKey{}, l), cancel
	b.fences.hold(f)
	go l.renew()
	return l
}

// renew renews the lease every LeaseTTL/3. When another replica holds it
// (or it expired: a renewal never takes a lease back), or renewals failed
// for half the TTL (so the lease may expire before the next one), the
// lease is lost: ctx is cancelled, before another replica can take the
// thread over. A renewal waits for the store only until that point.
func (l *heldLease) renew() {
	defer close(l.done)
	ttl := l.b.cfg.LeaseTTL
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-tick.C:
		}
		err := l.renewOnce(last.Add(ttl / 2))
		switch {
		case err == nil:
			last = time.Now()
			continue
		case errors.Is(err, storage.ErrFenced):
			l.lose("thread lease lost: it expired or another replica took the thread over")
		case time.Since(last) < ttl/2:
			l.b.log.Warn("renew thread lease", "thread", l.key, "err", err)
			continue
		default:
			l.b.log.Error("thread lease not renewed in time: giving the thread up", "thread", l.key, "err", err)
			l.lose("")
		}
		return
	}
}

// lose gives the thread up: ctx ends and nothing more is written for it.
// The stale fence stays in place until release, so a save the turn makes
// before it notices is refused (ErrFenced) rather than made unfenced.
func (l *heldLease) lose(why string) {
	if l.lost.Swap(true) {
		return
	}
	if why != "" {
		l.b.log.Warn(why, "thread", l.key, "replica", l.b.cfg.ReplicaID)
	}
	l.cancel()
}

// release stops renewing and, unless the lease was lost, gives it up.
func (l *heldLease) release() {
	l.cancel()
	<-l.done
	l.b.fences.drop(l.fence)
	if l.lost.Load() {
		return
	}
	if err := l.b.cfg.Store.ReleaseLease(l.key, l.b.cfg.ReplicaID); err != nil {
		l.b.log.Warn("release thread lease", "thread", l.key, "err", err) // it expires
	}
}

// ReplicaID is this bot's name among the replicas sharing the store.
func (b *Bot) ReplicaID() string { return b.cfg.ReplicaID }
