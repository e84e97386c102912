package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"time"
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
// shutdown): the thread's running turn is cancelled with it.
type heldLease struct {
	b      *Bot
	key    string
	ctx    context.Context
	cancel context.CancelFunc
	lost   atomic.Bool
	done   chan struct{}
}

// holdLease starts renewing a lease just taken on key.
func (b *Bot) holdLease(key string) *heldLease {
	ctx, cancel := context.WithCancel(b.turnCtx)
	l := &heldLease{b: b, key: key, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go l.renew()
	return l
}

// renew renews the lease every LeaseTTL/3. When another replica holds it,
// or renewals failed for half the TTL (so the lease may expire before the
// next one), the lease is lost: ctx is cancelled, before another replica
// can take the thread over.
func (l *heldLease) renew() {
	defer close(l.done)
	b, ttl := l.b, l.b.cfg.LeaseTTL
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-tick.C:
		}
		ok, err := b.cfg.Store.Lease(l.key, b.cfg.ReplicaID, ttl)
		switch {
		case err == nil && ok:
			last = time.Now()
			continue
		case err == nil:
			b.log.Warn("thread lease lost: another replica took the thread over", "thread", l.key, "replica", b.cfg.ReplicaID)
		case time.Since(last) < ttl/2:
			b.log.Warn("renew thread lease", "thread", l.key, "err", err)
			continue
		default:
			b.log.Error("thread lease not renewed in time: giving the thread up", "thread", l.key, "err", err)
		}
		l.lost.Store(true)
		l.cancel()
		return
	}
}

// release stops renewing and, unless the lease was lost, gives it up.
func (l *heldLease) release() {
	l.cancel()
	<-l.done
	if l.lost.Load() {
		return
	}
	if err := l.b.cfg.Store.ReleaseLease(l.key, l.b.cfg.ReplicaID); err != nil {
		l.b.log.Warn("release thread lease", "thread", l.key, "err", err) // it expires
	}
}

// ReplicaID is this bot's name among the replicas sharing the store.
func (b *Bot) ReplicaID() string { return b.cfg.ReplicaID }
