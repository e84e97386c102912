package bolt

import (
	"context"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// Seen marks key for ttl and reports whether it was already marked and not
// yet expired; the check and the mark are one transaction. An existing mark
// keeps its original expiry. Marks persist across restarts; expired ones are
// swept at most once a minute by Seen.
func (s *Store) Seen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := storage.CheckSeen(key, ttl); err != nil {
		return false, err
	}
	now := s.now()
	sweep := s.sweeper.Due(now)
	var seen bool
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketSeen)
		if sweep {
			if _, err := sweepSeen(b, now); err != nil {
				return err
			}
		}
		var err error
		seen, err = markSeen(b, key, now, ttl)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("seen %q: %w", key, err)
	}
	return seen, nil
}

// sweepSeen deletes the entries of b that expire at or before now.
func sweepSeen(b *bbolt.Bucket, now time.Time) (int, error) {
	var expired [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) != 8 || int64(be64(v)) <= now.UnixNano() {
			expired = append(expired, append([]byte(nil), k...))
		}
	}
	var errs []error
	for _, k := range expired {
		errs = append(errs, b.Delete(k))
	}
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return len(expired), nil
}

// markSeen marks key until now+ttl unless a live mark exists, and reports
// whether one did (the mark then keeps its expiry).
func markSeen(b *bbolt.Bucket, key string, now time.Time, ttl time.Duration) (bool, error) {
	if v := b.Get([]byte(key)); len(v) == 8 && int64(be64(v)) > now.UnixNano() {
		return true, nil
	}
	return false, b.Put([]byte(key), u64Key(uint64(now.Add(ttl).UnixNano())))
}
