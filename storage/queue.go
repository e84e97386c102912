package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Queued is one persisted inbound message waiting for its turn.
type Queued struct {
	// Seq is unique across the store and grows with every Enqueue.
	Seq      uint64
	Payload  []byte
	Enqueued time.Time
}

// Layout: queue/<session key>/<big-endian seq> = 8-byte enqueue time
// (UnixNano) followed by the payload. A key's bucket is dropped when its
// last item is dequeued; seqs come from the root queue bucket, so they are
// never reused.

// Enqueue persists payload (JSON the caller defines) at the end of the
// session key's queue and returns its sequence number.
func (s *Store) Enqueue(sessionKey string, payload []byte) (uint64, error) {
	if err := checkKey("session key", sessionKey); err != nil {
		return 0, fmt.Errorf("enqueue: %w", err)
	}
	if !json.Valid(payload) {
		return 0, fmt.Errorf("enqueue %q: payload is not valid JSON", sessionKey)
	}
	var seq uint64
	err := s.db.Update(func(tx *bolt.Tx) error {
		var err error
		seq, err = s.enqueueTx(tx, sessionKey, payload)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("enqueue %q: %w", sessionKey, err)
	}
	return seq, nil
}

// Pending returns the session key's queued items, oldest first; none is an
// empty result, not an error.
func (s *Store) Pending(sessionKey string) ([]Queued, error) {
	if err := checkKey("session key", sessionKey); err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	var items []Queued
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketQueue).Bucket([]byte(sessionKey))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) != 8 || len(v) < 8 {
				return fmt.Errorf("corrupt queue item %x", k)
			}
			items = append(items, Queued{
				Seq:      be64(k),
				Payload:  bytes.Clone(v[8:]),
				Enqueued: time.Unix(0, int64(be64(v[:8]))),
			})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("pending %q: %w", sessionKey, err)
	}
	return items, nil
}

// Dequeue removes one queued item. An unknown seq is an error matching
// ErrNotFound.
func (s *Store) Dequeue(sessionKey string, seq uint64) error {
	if err := checkKey("session key", sessionKey); err != nil {
		return fmt.Errorf("dequeue: %w", err)
	}
	err := s.db.Batch(func(tx *bolt.Tx) error { // concurrent dequeues share a commit
		root := tx.Bucket(bucketQueue)
		b := root.Bucket([]byte(sessionKey))
		if b == nil || b.Get(u64Key(seq)) == nil {
			return ErrNotFound
		}
		if err := b.Delete(u64Key(seq)); err != nil {
			return err
		}
		if k, _ := b.Cursor().First(); k == nil {
			return root.DeleteBucket([]byte(sessionKey))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("dequeue %q seq %d: %w", sessionKey, seq, err)
	}
	return nil
}

// PendingKeys returns every session key with queued items, in byte order,
// for recovery at start-up.
func (s *Store) PendingKeys() ([]string, error) {
	var keys []string
	err := s.db.View(func(tx *bolt.Tx) error {
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

// enqueueTx appends payload to the session key's queue inside tx.
func (s *Store) enqueueTx(tx *bolt.Tx, sessionKey string, payload []byte) (uint64, error) {
	root := tx.Bucket(bucketQueue)
	seq, err := root.NextSequence()
	if err != nil {
		return 0, err
	}
	b, err := root.CreateBucketIfNotExists([]byte(sessionKey))
	if err != nil {
		return 0, err
	}
	return seq, b.Put(u64Key(seq), append(u64Key(uint64(s.now().UnixNano())), payload...))
}

// Admit handles one inbound message in a single commit: it marks every
// dedupe key for ttl and, unless one of them was marked already (dup),
// enqueues payload for the session key. With no keys it is Enqueue.
func (s *Store) Admit(keys []string, ttl time.Duration, sessionKey string, payload []byte) (dup bool, seq uint64, err error) {
	for _, k := range keys {
		if err := checkKey("seen key", k); err != nil {
			return false, 0, fmt.Errorf("admit: %w", err)
		}
	}
	if err := checkKey("session key", sessionKey); err != nil {
		return false, 0, fmt.Errorf("admit: %w", err)
	}
	if len(keys) > 0 && ttl <= 0 {
		return false, 0, fmt.Errorf("admit %q: ttl must be positive, got %s", sessionKey, ttl)
	}
	if !json.Valid(payload) {
		return false, 0, fmt.Errorf("admit %q: payload is not valid JSON", sessionKey)
	}
	now := s.now()
	sweep := len(keys) > 0 && s.sweepDue(now)
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSeen)
		if sweep {
			if _, err := sweepSeen(b, now); err != nil {
				return err
			}
		}
		for _, k := range keys {
			marked, err := markSeen(b, k, now, ttl)
			if err != nil {
				return err
			}
			dup = dup || marked
		}
		if dup {
			return nil
		}
		var err error
		seq, err = s.enqueueTx(tx, sessionKey, payload)
		return err
	})
	if err != nil {
		return false, 0, fmt.Errorf("admit %q: %w", sessionKey, err)
	}
	return dup, seq, nil
}
