package bolt

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// Layout: queue/<session key>/<big-endian order><big-endian seq> = 8-byte
// enqueue time (UnixNano) followed by the payload, so a cursor walks a
// thread's items in their order (storage.Queued.Order), then by seq. A
// key's bucket is dropped when its last item is dequeued; seqs come from
// the root queue bucket, so they are never reused.

// queueItemKey is an item's key in its thread's bucket.
func queueItemKey(order int64, seq uint64) []byte {
	return append(u64Key(uint64(order)), u64Key(seq)...)
}

// decodeQueued reads one stored item.
func decodeQueued(k, v []byte) (storage.Queued, error) {
	if len(k) != 16 || len(v) < 8 {
		return storage.Queued{}, fmt.Errorf("corrupt queue item %x", k)
	}
	return storage.Queued{
		Order:    int64(be64(k[:8])),
		Seq:      be64(k[8:]),
		Payload:  bytes.Clone(v[8:]),
		Enqueued: time.Unix(0, int64(be64(v[:8]))),
	}, nil
}

// Pending returns the session key's queued items, oldest first; none is an
// empty result, not an error.
func (s *Store) Pending(ctx context.Context, sessionKey string) ([]storage.Queued, error) {
	if err := storage.CheckKey("session key", sessionKey); err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	var items []storage.Queued
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketQueue).Bucket([]byte(sessionKey))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			q, err := decodeQueued(k, v)
			items = append(items, q)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pending %q: %w", sessionKey, err)
	}
	return items, nil
}

// dequeue removes one queued item outside any lease (a migration moving
// it to another store). An unknown seq is an error matching
// storage.ErrNotFound.
func (s *Store) dequeue(ctx context.Context, sessionKey string, seq uint64) error {
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		return dequeueTx(tx, sessionKey, seq)
	})
	if err != nil {
		return fmt.Errorf("dequeue %q seq %d: %w", sessionKey, seq, err)
	}
	return nil
}

// dequeueTx removes item seq of the session key in tx, finding it by a
// walk of the thread's (short) queue; an unknown one is
// storage.ErrNotFound.
func dequeueTx(tx *bbolt.Tx, sessionKey string, seq uint64) error {
	root := tx.Bucket(bucketQueue)
	b := root.Bucket([]byte(sessionKey))
	if b == nil {
		return storage.ErrNotFound
	}
	c := b.Cursor()
	k, _ := c.First()
	for ; k != nil && (len(k) != 16 || be64(k[8:]) != seq); k, _ = c.Next() {
	}
	if k == nil {
		return storage.ErrNotFound
	}
	if err := c.Delete(); err != nil {
		return err
	}
	if k, _ := b.Cursor().First(); k == nil {
		return root.DeleteBucket([]byte(sessionKey))
	}
	return nil
}

// PendingKeys returns every session key with queued items, in byte order,
// for recovery at start-up.
func (s *Store) PendingKeys(ctx context.Context) ([]string, error) {
	var keys []string
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketQueue).ForEachBucket(func(k []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pending keys: %w", err)
	}
	return keys, nil
}

// enqueueTx queues payload for the session key at order (0: now) inside
// tx.
func (s *Store) enqueueTx(tx *bbolt.Tx, sessionKey string, order int64, payload []byte) (uint64, error) {
	root := tx.Bucket(bucketQueue)
	seq, err := root.NextSequence()
	if err != nil {
		return 0, err
	}
	b, err := root.CreateBucketIfNotExists([]byte(sessionKey))
	if err != nil {
		return 0, err
	}
	now := s.now()
	if order <= 0 {
		order = now.UnixMicro()
	}
	return seq, b.Put(queueItemKey(order, seq), append(u64Key(uint64(now.UnixNano())), payload...))
}

// admitReq is one Admit waiting for the committer.
type admitReq struct {
	keys       []string
	ttl        time.Duration
	sessionKey string
	order      int64
	payload    []byte
	journaled  chan error
	done       chan storage.Admission
}

// maxAdmitBatch bounds how many admissions share one commit.
const maxAdmitBatch = 256

// Admit handles one inbound message durably: it marks every dedupe key
// for ttl and, unless one of them was marked already (dup), queues payload
// for the session key at order (see storage.Inbound). The admission is
// journaled, then applied in the order of the calls, in the next commit,
// together with every other admission waiting then (group commit), and its
// outcome arrives on done once that commit is durable. journaled
// receives nil once the admission is fsynced in the inbound journal (so a
// crash cannot lose it: the caller may ack the message), or the error when
// it could not be written there; such an admission is dropped, and done
// carries the error too. An admission whose commit fails stays journaled
// and is retried until it commits (or replayed at the next start); its
// outcome waits for that.
func (s *Store) Admit(ctx context.Context, order int64, keys []string, ttl time.Duration, sessionKey string, payload []byte) (<-chan error, <-chan storage.Admission) {
	journaled, done := make(chan error, 1), make(chan storage.Admission, 1)
	fail := func(err error) (<-chan error, <-chan storage.Admission) {
		journaled <- err
		done <- storage.Admission{Err: err}
		return journaled, done
	}
	if err := storage.CheckAdmit(keys, ttl, sessionKey, payload); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil { // once journaled, it commits whatever ctx does
		return fail(fmt.Errorf("admit %q: %w", sessionKey, err))
	}
	s.admitMu.Lock()
	defer s.admitMu.Unlock()
	if s.admitClosed {
		return fail(fmt.Errorf("admit %q: the store is closed", sessionKey))
	}
	s.jreqs <- &admitReq{keys: keys, ttl: ttl, sessionKey: sessionKey, order: order, payload: payload, journaled: journaled, done: done}
	return journaled, done
}

// committer applies journaled admissions, as many as are waiting, in one
// transaction each round, until the journaler is done. A batch whose
// commit fails is kept, with its journal entries, and retried ahead of
// later admissions, so nothing journaled is dropped and order holds.
func (s *Store) committer() {
	defer close(s.admitDone)
	var retry []*admitReq
	for {
		batch, open := retry, true
		if len(retry) == 0 {
			first, ok := <-s.admits
			if !ok {
				return
			}
			batch = storage.Batch(first, s.admits, maxAdmitBatch)
		} else {
			batch, open = s.retryWait(retry)
		}
		if err := s.commitAdmissions(batch); err != nil {
			if !open {
				s.abandon(batch) // closing: the journal keeps them for the next start
				return
			}
			retry = batch
			continue
		}
		retry = nil
		s.committed(len(batch))
	}
}

// retryWait waits retryEvery, or less when new admissions arrive, and
// returns the failed batch with what arrived after it; open is false once
// the journaler is done.
func (s *Store) retryWait(retry []*admitReq) (batch []*admitReq, open bool) {
	t := time.NewTimer(retryEvery)
	defer t.Stop()
	select {
	case <-t.C:
		return retry, true
	case r, ok := <-s.admits:
		if !ok {
			return retry, false
		}
		return append(retry, storage.Batch(r, s.admits, maxAdmitBatch)...), true
	}
}

// abandon reports a batch that could not be committed before the store
// closed; its entries stay in the journal, replayed at the next Open.
func (s *Store) abandon(batch []*admitReq) {
	for _, r := range batch {
		r.done <- storage.Admission{Err: fmt.Errorf("admit %q: not committed before the store closed; the journal replays it at the next start", r.sessionKey)}
	}
}

// commitAdmissions applies a batch in order in one transaction; marks made
// by an earlier admission of the batch count as seen for a later one. Once
// committed, it delivers each outcome; a failed commit delivers nothing
// and returns the error, for the caller to retry.
func (s *Store) commitAdmissions(batch []*admitReq) error {
	out := make([]storage.Admission, len(batch))
	now := s.now()
	sweep := s.sweeper.Due(now)
	// bbolt's Batch: the admissions join the commit that concurrent
	// session saves share, instead of queueing behind them for the write
	// lock. The function is idempotent, as Batch may run it again alone.
	err := s.db.Batch(func(tx *bbolt.Tx) error {
		clear(out)
		if s.commitFault != nil {
			if err := s.commitFault(); err != nil {
				return err
			}
		}
		b := tx.Bucket(bucketSeen)
		if sweep {
			if _, err := sweepSeen(b, now); err != nil {
				return err
			}
		}
		for i, r := range batch {
			for _, k := range r.keys {
				marked, err := markSeen(b, k, now, r.ttl)
				if err != nil {
					return err
				}
				out[i].Dup = out[i].Dup || marked
			}
			if out[i].Dup {
				continue
			}
			seq, err := s.enqueueTx(tx, r.sessionKey, r.order, r.payload)
			if err != nil {
				return err
			}
			out[i].Seq = seq
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit %d admissions: %w", len(batch), err)
	}
	for i, r := range batch {
		r.done <- out[i]
	}
	return nil
}
