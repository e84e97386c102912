package bolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// bucketLeases holds the leases on threads' work, for replicas sharing a
// store. Layout: leases/<key> = 8-byte expiry (UnixNano), 8-byte fencing
// token, then the holder. The bucket's sequence is the last token given.
var bucketLeases = []byte("leases")

// clearLeases empties the leases bucket (creating it) when the store opens:
// the database is locked to one process, so leases found then were held by
// a process that is gone, and a restart resumes its threads at once. The
// token sequence carries over, so tokens keep growing.
func clearLeases(tx *bbolt.Tx) error {
	var last uint64
	if b := tx.Bucket(bucketLeases); b != nil {
		last = b.Sequence()
		if err := tx.DeleteBucket(bucketLeases); err != nil {
			return fmt.Errorf("clear leases: %w", err)
		}
	}
	b, err := tx.CreateBucket(bucketLeases)
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", bucketLeases, err)
	}
	return b.SetSequence(last)
}

// lease is one stored lease.
type lease struct {
	expires time.Time
	token   uint64
	holder  string
}

func (l lease) encode() []byte {
	v := u64Key(uint64(l.expires.UnixNano()))
	v = append(v, u64Key(l.token)...)
	return append(v, l.holder...)
}

// decodeLease reads a stored lease.
func decodeLease(v []byte) (lease, error) {
	if len(v) < 16 {
		return lease{}, fmt.Errorf("corrupt lease record (%d bytes)", len(v))
	}
	return lease{time.Unix(0, int64(be64(v[:8]))), be64(v[8:16]), string(bytes.Clone(v[16:]))}, nil
}

// TakeLease takes the lease on key's work for holder until now+ttl, with a
// new token, when it is free, expired, or holder's own. It reports false,
// changing nothing, while another holder's lease is live. The expiry is
// read on the store's clock (Now).
func (s *Store) TakeLease(ctx context.Context, key, holder string, ttl time.Duration) (storage.Fence, bool, error) {
	if err := storage.CheckTakeLease(key, holder, ttl); err != nil {
		return storage.Fence{}, false, err
	}
	if held, err := s.heldByOther(ctx, key, holder); err != nil || held {
		return storage.Fence{}, false, err
	}
	var f storage.Fence
	err := s.batch(ctx, func(tx *bbolt.Tx) error { // takes of many threads share a commit
		f = storage.Fence{}
		now := s.now()
		b := tx.Bucket(bucketLeases)
		if v := b.Get([]byte(key)); v != nil {
			l, err := decodeLease(v)
			if err != nil {
				return err
			}
			if l.holder != holder && now.Before(l.expires) {
				return nil
			}
		}
		token, err := b.NextSequence()
		if err != nil {
			return err
		}
		f = storage.Fence{Key: key, Holder: holder, Token: token}
		return b.Put([]byte(key), lease{now.Add(ttl), token, holder}.encode())
	})
	if err != nil {
		return storage.Fence{}, false, fmt.Errorf("lease %q for %s: %w", key, holder, err)
	}
	return f, f.Token != 0, nil
}

// heldByOther reports, in a read transaction, whether another holder's
// lease on key is live: replicas scanning for work ask often about threads
// others work, and a refusal needs no write.
func (s *Store) heldByOther(ctx context.Context, key, holder string) (bool, error) {
	var held bool
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketLeases).Get([]byte(key))
		if v == nil {
			return nil
		}
		l, err := decodeLease(v)
		held = err == nil && l.holder != holder && s.now().Before(l.expires)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("lease %q for %s: %w", key, holder, err)
	}
	return held, nil
}

// RenewLease extends f's lease to now+ttl while f is live; otherwise it
// is storage.ErrFenced and nothing changes.
func (s *Store) RenewLease(ctx context.Context, f storage.Fence, ttl time.Duration) error {
	if err := storage.CheckRenewLease(f, ttl); err != nil {
		return err
	}
	err := s.batch(ctx, func(tx *bbolt.Tx) error {
		if err := s.checkFenceTx(tx, f); err != nil {
			return err
		}
		return tx.Bucket(bucketLeases).Put([]byte(f.Key), lease{s.now().Add(ttl), f.Token, f.Holder}.encode())
	})
	if err != nil {
		return fmt.Errorf("renew lease %q for %s: %w", f.Key, f.Holder, err)
	}
	return nil
}

// CheckFence returns nil while f is the live lease on its key.
func (s *Store) CheckFence(ctx context.Context, f storage.Fence) error {
	if err := storage.CheckFence(f); err != nil {
		return err
	}
	err := s.view(ctx, func(tx *bbolt.Tx) error { return s.checkFenceTx(tx, f) })
	if err != nil {
		return fmt.Errorf("check lease %q for %s: %w", f.Key, f.Holder, err)
	}
	return nil
}

// checkFenceTx is storage.ErrFenced unless f is the live lease in tx.
func (s *Store) checkFenceTx(tx *bbolt.Tx, f storage.Fence) error {
	v := tx.Bucket(bucketLeases).Get([]byte(f.Key))
	if v == nil {
		return storage.ErrFenced
	}
	l, err := decodeLease(v)
	if err != nil {
		return err
	}
	if l.holder != f.Holder || l.token != f.Token || !s.now().Before(l.expires) {
		return storage.ErrFenced
	}
	return nil
}

// ReleaseLease gives up holder's lease on key. A lease of another holder,
// or none, is left as it is.
func (s *Store) ReleaseLease(ctx context.Context, key, holder string) error {
	if err := storage.CheckLease(key, holder); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	err := s.batch(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketLeases)
		v := b.Get([]byte(key))
		if v == nil {
			return nil
		}
		if l, err := decodeLease(v); err != nil || l.holder != holder {
			return err
		}
		return b.Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("release lease %q for %s: %w", key, holder, err)
	}
	return nil
}

// SaveSessionFenced is SaveSession under f, in one transaction with the
// check of the fence.
func (s *Store) SaveSessionFenced(ctx context.Context, f storage.Fence, sess *transcript.Session) error {
	if sess == nil {
		return errors.New("save session: nil session")
	}
	if err := storage.CheckID(sess.ID); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	if err := storage.CheckFence(f); err != nil {
		return fmt.Errorf("save session %s: %w", sess.ID, err)
	}
	if sess.Key != f.Key {
		return fmt.Errorf("save session %s: key %q is not the fence's %q", sess.ID, sess.Key, f.Key)
	}
	updated := s.now()
	err := s.batch(ctx, func(tx *bbolt.Tx) error {
		if err := s.checkFenceTx(tx, f); err != nil {
			return err
		}
		sess.Updated = updated
		return saveTx(tx, sess)
	})
	if err != nil {
		return fmt.Errorf("save session %s: %w", sess.ID, err)
	}
	return nil
}

// CompleteFenced sets meta on f.Key's session (if any) and dequeues seq,
// under f, in one transaction.
func (s *Store) CompleteFenced(ctx context.Context, f storage.Fence, seq uint64, meta map[string]string) error {
	if err := storage.CheckFence(f); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	err := s.batch(ctx, func(tx *bbolt.Tx) error {
		if err := s.checkFenceTx(tx, f); err != nil {
			return err
		}
		if seq != 0 {
			if err := dequeueTx(tx, f.Key, seq); err != nil {
				return err
			}
		}
		if len(meta) == 0 {
			return nil
		}
		if err := setMetaTx(tx, f.Key, meta); !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("complete %q seq %d: %w", f.Key, seq, err)
	}
	return nil
}
