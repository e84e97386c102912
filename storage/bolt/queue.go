package bolt

import (
	"bytes"
	"encoding/json"
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

// Enqueue persists payload (JSON the caller defines) at the end of the
// session key's queue and returns its sequence number.
func (s *Store) Enqueue(sessionKey string, payload []byte) (uint64, error) {
	if err := storage.CheckKey("session key", sessionKey); err != nil {
		return 0, fmt.Errorf("enqueue: %w", err)
	}
	if !json.Valid(payload) {
		return 0, fmt.Errorf("enqueue %q: payload is not valid JSON", sessionKey)
	}
	var seq uint64
	err := s.db.Update(func(tx *bbolt.Tx) error {
		var err error
		seq, err = s.enqueueTx(tx, sessionKey, 0, payload)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("enqueue %q: %w", sessionKey, err)
	}
	return seq, nil
}

// Pending returns the session key's queued items, oldest first; none is an
// empty result, not an error.
func (s *Store) Pending(sessionKey string) ([]storage.Queued, error) {
	if err := storage.CheckKey("session key", sessionKey); err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	var items []storage.Queued
	err := s.db.View(func(tx *bbolt.Tx) error {
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

// Next returns the oldest queued item of a session key, reading only that
// one; ok is false when the queue is empty.
func (s *Store) Next(sessionKey string) (seq uint64, payload []byte, ok bool, err error) {
	if err := storage.CheckKey("session key", sessionKey); err != nil {
		return 0, nil, false, fmt.Errorf("next: %w", err)
	}
	err = s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketQueue).Bucket([]byte(sessionKey))
		if b == nil {
			return nil
		}
		k, v := b.Cursor().First()
		if k == nil {
			return nil
		}
		q, err := decodeQueued(k, v)
		seq, payload, ok = q.Seq, q.Payload, err == nil
		return err
	})
	if err != nil {
		return 0, nil, false, fmt.Errorf("next %q: %w", sessionKey, err)
	}
	return seq, payload, ok, nil
}

// Dequeue removes one queued item. An unknown seq is an error matching
// storage.ErrNotFound.
func (s *Store) Dequeue(sessionKey string, seq uint64) error {
	if err := storage.CheckKey("session key", sessionKey); err != nil {
		return fmt.Errorf("dequeue: %w", err)
	}
	err := s.db.Batch(func(tx *bbolt.Tx) error { // concurrent dequeues share a commit
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
func (s *Store) PendingKeys() ([]string, error) {
	var keys []string
	err := s.db.View(func(tx *bbolt.Tx) error {
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
	done       chan storage.Admission
}

// maxAdmitBatch bounds how many admissions share one commit.
const maxAdmitBatch = 256

// Admit handles one inbound message durably: it marks every dedupe key for
// ttl and, unless one of them was marked already (dup), enqueues payload
// for the session key. It returns once committed. Concurrent admissions
// share commits (see AdmitAsync). With no keys it is Enqueue.
func (s *Store) Admit(keys []string, ttl time.Duration, sessionKey string, payload []byte) (dup bool, seq uint64, err error) {
	a := <-s.AdmitAsync(keys, ttl, sessionKey, payload)
	return a.Dup, a.Seq, a.Err
}

// AdmitJournaled is true: AdmitAsync returns once the admission is in the
// inbound journal (see storage.Journaled).
func (s *Store) AdmitJournaled() bool { return true }

// AdmitAsync is Admit without waiting for the commit: when it returns,
// the admission is in the inbound journal, so a crash of the process does
// not lose it; it is applied in the order of the calls, in the next commit,
// together with every other admission waiting then (group commit), and its
// outcome arrives on the returned channel once that commit is durable. An
// admission that could not be journaled fails at once.
func (s *Store) AdmitAsync(keys []string, ttl time.Duration, sessionKey string, payload []byte) <-chan storage.Admission {
	return s.AdmitOrdered(0, keys, ttl, sessionKey, payload)
}

// AdmitOrdered is AdmitAsync for an item placed in its thread by order
// (see storage.Inbound).
func (s *Store) AdmitOrdered(order int64, keys []string, ttl time.Duration, sessionKey string, payload []byte) <-chan storage.Admission {
	done := make(chan storage.Admission, 1)
	if err := storage.CheckAdmit(keys, ttl, sessionKey, payload); err != nil {
		done <- storage.Admission{Err: err}
		return done
	}
	s.admitMu.Lock()
	defer s.admitMu.Unlock()
	if s.admitClosed {
		done <- storage.Admission{Err: fmt.Errorf("admit %q: the store is closed", sessionKey)}
		return done
	}
	// The journal first: once AdmitAsync returns, a crash of the process
	// cannot lose the message (see JournalName).
	if err := s.appendJournal(journalEntry{Keys: keys, TTL: ttl, Key: sessionKey, Order: order, Payload: payload}); err != nil {
		done <- storage.Admission{Err: fmt.Errorf("admit %q: journal: %w", sessionKey, err)}
		return done
	}
	s.pendingAdmits++
	s.admits <- &admitReq{keys: keys, ttl: ttl, sessionKey: sessionKey, order: order, payload: payload, done: done}
	return done
}

// committer applies queued admissions, as many as are waiting, in one
// transaction each round, until the queue is closed.
func (s *Store) committer() {
	defer close(s.admitDone)
	for first := range s.admits {
		batch := storage.Batch(first, s.admits, maxAdmitBatch)
		s.commitAdmissions(batch)
		s.admitMu.Lock()
		s.pendingAdmits -= len(batch)
		if s.pendingAdmits == 0 {
			_ = s.journal.Truncate(0) // everything in it is committed
		}
		s.admitMu.Unlock()
	}
}

// commitAdmissions applies a batch in order in one transaction; marks made
// by an earlier admission of the batch count as seen for a later one.
func (s *Store) commitAdmissions(batch []*admitReq) {
	out := make([]storage.Admission, len(batch))
	now := s.now()
	sweep := s.sweeper.Due(now)
	// bbolt's Batch: the admissions join the commit that concurrent
	// session saves share, instead of queueing behind them for the write
	// lock. The function is idempotent, as Batch may run it again alone.
	err := s.db.Batch(func(tx *bbolt.Tx) error {
		clear(out)
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
	for i, r := range batch {
		if err != nil {
			out[i] = storage.Admission{Err: fmt.Errorf("admit %q: %w", r.sessionKey, err)}
		}
		r.done <- out[i]
	}
}
