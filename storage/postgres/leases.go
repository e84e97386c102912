package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
)

// Leases and their fences live in the leases table, on the database's
// clock (clock_timestamp()), which the replicas share: a replica's own
// clock never decides who holds a thread. Tokens come from the
// lease_tokens sequence, so they grow across every key and take.

// takeSQL takes the lease on $1 for $2 for $3 microseconds with a new
// token, when it is free, expired or $2's own; it returns the token, or no
// row while another holder's lease is live.
const takeSQL = `INSERT INTO leases (key, holder, expires, token)
	VALUES ($1, $2, clock_timestamp() + $3::bigint * interval '1 microsecond', nextval('lease_tokens'))
	ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires = excluded.expires, token = excluded.token
	WHERE leases.holder = excluded.holder OR leases.expires <= clock_timestamp()
	RETURNING token`

// checkFenceSQL finds the fence ($1, $2, $3) when it is the live lease,
// and locks the lease row until the transaction ends, so no takeover can
// commit between the check and the write it guards.
const checkFenceSQL = `SELECT 1 FROM leases WHERE key = $1 AND holder = $2 AND token = $3 AND expires > clock_timestamp() FOR SHARE`

// TakeLease takes the lease on key for holder for ttl, with a new token,
// when it is free or expired, or holder's own; it reports false while
// another holder's lease is live. Expiry is by the database's clock.
func (s *Store) TakeLease(ctx context.Context, key, holder string, ttl time.Duration) (storage.Fence, bool, error) {
	if err := storage.CheckTakeLease(key, holder, ttl); err != nil {
		return storage.Fence{}, false, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var token int64
	err := s.pool.QueryRow(ctx, takeSQL, key, holder, ttl.Microseconds()).Scan(&token)
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.Fence{}, false, nil
	}
	if err != nil {
		return storage.Fence{}, false, fmt.Errorf("lease %q: %w", key, err)
	}
	return storage.Fence{Key: key, Holder: holder, Token: uint64(token)}, true, nil
}

// RenewLease extends f's lease to ttl from now while f is live; a lease
// that expired, was released or taken over is storage.ErrFenced, and a
// renewal never takes it back.
func (s *Store) RenewLease(ctx context.Context, f storage.Fence, ttl time.Duration) error {
	if err := storage.CheckRenewLease(f, ttl); err != nil {
		return err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `UPDATE leases SET expires = clock_timestamp() + $4::bigint * interval '1 microsecond'
		WHERE key = $1 AND holder = $2 AND token = $3 AND expires > clock_timestamp()`,
		f.Key, f.Holder, int64(f.Token), ttl.Microseconds())
	if err == nil && tag.RowsAffected() == 0 {
		err = storage.ErrFenced
	}
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
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return checkFence(ctx, tx, f) })
	if err != nil {
		return fmt.Errorf("check lease %q for %s: %w", f.Key, f.Holder, err)
	}
	return nil
}

// checkFence is storage.ErrFenced unless f is the live lease; in a
// transaction, the lease row stays locked until it ends.
func checkFence(ctx context.Context, tx pgx.Tx, f storage.Fence) error {
	var one int
	err := tx.QueryRow(ctx, checkFenceSQL, f.Key, f.Holder, int64(f.Token)).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.ErrFenced
	}
	return err
}

// ReleaseLease gives up holder's lease on key; a lease another holder has
// is left alone.
func (s *Store) ReleaseLease(ctx context.Context, key, holder string) error {
	if err := storage.CheckLease(key, holder); err != nil {
		return fmt.Errorf("release lease: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM leases WHERE key = $1 AND holder = $2`, key, holder); err != nil {
		return fmt.Errorf("release lease %q: %w", key, err)
	}
	return nil
}

// CompleteFenced sets meta on f.Key's session (when it has one) and
// removes queued item seq (none for seq 0), in one transaction with the
// check of f.
func (s *Store) CompleteFenced(ctx context.Context, f storage.Fence, seq uint64, meta map[string]string) error {
	if err := storage.CheckFence(f); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := checkFence(ctx, tx, f); err != nil {
			return err
		}
		if seq != 0 {
			tag, err := tx.Exec(ctx, `DELETE FROM queue WHERE session_key = $1 AND seq = $2`, f.Key, int64(seq))
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return storage.ErrNotFound
			}
		}
		if err := setMetaTx(ctx, tx, f.Key, meta); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("complete %q seq %d: %w", f.Key, seq, err)
	}
	return nil
}
