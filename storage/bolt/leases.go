package bolt

import (
	"bytes"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// bucketLeases holds the leases on threads' work, for replicas sharing a
// store. Layout: leases/<key> = 8-byte expiry (UnixNano) followed by the
// holder.
var bucketLeases = []byte("leases")

// clearLeases empties the leases bucket (creating it) when the store opens:
// the database is locked to one process, so leases found then were held by
// a process that is gone, and a restart resumes its threads at once.
func clearLeases(tx *bbolt.Tx) error {
	if tx.Bucket(bucketLeases) != nil {
		if err := tx.DeleteBucket(bucketLeases); err != nil {
			return fmt.Errorf("clear leases: %w", err)
		}
	}
	if _, err := tx.CreateBucket(bucketLeases); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketLeases, err)
	}
	return nil
}

// Lease takes the lease on key's work for holder until now+ttl, when it is
// free, expired, or holder's own (a renewal). It reports false, changing
// nothing, while another holder's lease is live. The expiry is read on the
// store's clock (Now).
func (s *Store) Lease(key, holder string, ttl time.Duration) (bool, error) {
	if err := storage.CheckLease(key, holder); err != nil {
		return false, fmt.Errorf("lease: %w", err)
	}
	if ttl <= 0 {
		return false, fmt.Errorf("lease %q: ttl must be positive, got %s", key, ttl)
	}
	if held, err := s.heldByOther(key, holder); err != nil || held {
		return false, err
	}
	var got bool
	err := s.db.Batch(func(tx *bbolt.Tx) error { // renewals of many threads share a commit
		got = false
		now := s.now()
		b := tx.Bucket(bucketLeases)
		if v := b.Get([]byte(key)); v != nil {
			exp, who, err := decodeLease(v)
			if err != nil {
				return err
			}
			if who != holder && now.Before(exp) {
				return nil
			}
		}
		got = true
		return b.Put([]byte(key), append(u64Key(uint64(now.Add(ttl).UnixNano())), holder...))
	})
	if err != nil {
		return false, fmt.Errorf("lease %q for %s: %w", key, holder, err)
	}
	return got, nil
}

// heldByOther reports, in a read transaction, whether another holder's
// lease on key is live: replicas scanning for work ask often about threads
// others work, and a refusal needs no write.
func (s *Store) heldByOther(key, holder string) (bool, error) {
	var held bool
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketLeases).Get([]byte(key))
		if v == nil {
			return nil
		}
		exp, who, err := decodeLease(v)
		held = err == nil && who != holder && s.now().Before(exp)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("lease %q for %s: %w", key, holder, err)
	}
	return held, nil
}

// ReleaseLease gives up holder's lease on key. A lease of another holder,
// or none, is left as it is.
func (s *Store) ReleaseLease(key, holder string) error {
	if err := storage.CheckLease(key, holder); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	err := s.db.Batch(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLeases)
		v := b.Get([]byte(key))
		if v == nil {
			return nil
		}
		if _, who, err := decodeLease(v); err != nil || who != holder {
			return err
		}
		return b.Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("release lease %q for %s: %w", key, holder, err)
	}
	return nil
}

// decodeLease splits a stored lease into its expiry and holder.
func decodeLease(v []byte) (time.Time, string, error) {
	if len(v) < 8 {
		return time.Time{}, "", fmt.Errorf("corrupt lease record (%d bytes)", len(v))
	}
	return time.Unix(0, int64(be64(v[:8]))), string(bytes.Clone(v[8:])), nil
}
