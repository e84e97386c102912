package storetest

import (
	"context"
	"time"

	"agentbot/storage"
)

// Helpers over the contract for tests of the stores and their callers:
// each is a short spelling of a call sequence the bot makes.

// Admit admits payload for key at the time of admission (order 0) and
// waits for the outcome.
func Admit(ctx context.Context, st storage.Inbound, keys []string, ttl time.Duration, key string, payload []byte) (dup bool, seq uint64, err error) {
	a := <-Done(st.Admit(ctx, 0, keys, ttl, key, payload))
	return a.Dup, a.Seq, a.Err
}

// Done is the outcome channel of an Admit, for a caller that waits for
// the commit.
func Done(_ <-chan error, done <-chan storage.Admission) <-chan storage.Admission { return done }

// Enqueue queues payload for key (an admission without dedupe keys) and
// returns its seq.
func Enqueue(ctx context.Context, st storage.Inbound, key string, payload []byte) (uint64, error) {
	_, seq, err := Admit(ctx, st, nil, 0, key, payload)
	return seq, err
}

// Leaser is a store with leases and fenced writes.
type Leaser interface {
	storage.Leases
	storage.Fenced
}

// Lease takes the lease on key for holder and reports whether it got it.
func Lease(ctx context.Context, st storage.Leases, key, holder string, ttl time.Duration) (bool, error) {
	_, ok, err := st.TakeLease(ctx, key, holder, ttl)
	return ok, err
}

// Dequeue removes queued item seq of key as the bot does, by
// CompleteFenced under a lease taken for it (holder "storetest") and
// released after; an item not queued is an error matching
// storage.ErrNotFound.
func Dequeue(ctx context.Context, st Leaser, key string, seq uint64) error {
	f, ok, err := st.TakeLease(ctx, key, "storetest", time.Minute)
	if err != nil {
		return err
	}
	if !ok {
		return storage.ErrFenced
	}
	defer st.ReleaseLease(context.WithoutCancel(ctx), key, f.Holder)
	return st.CompleteFenced(ctx, f, seq, nil)
}
