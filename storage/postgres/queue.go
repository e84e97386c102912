package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
)

// Dedupe marks and queue times are read on the database's clock
// (agentbot_now_ns(), Unix nanoseconds), which the replicas share, so a
// replica whose clock is off cannot re-admit an event or sweep marks early.
// Each statement adds the test shift (see SetNow), 0 in production.

// clockSQL is the CTE clk with the database's now, plus the shift $3.
const clockSQL = `clk AS (SELECT agentbot_now_ns() + $3::bigint AS t)`

// sweepSQL removes the marks expired at the database's now plus the shift
// $1: Seen and admissions once every storage.SweepInterval.
const sweepSQL = `DELETE FROM seen WHERE expires <= agentbot_now_ns() + $1::bigint`

// maxAdmitBatch bounds how many admissions share one round trip.
const maxAdmitBatch = 256

// markSQL marks each key of $1 for $2 nanoseconds unless a live mark
// exists (one expiring after clk's now) and returns the keys it marked: a
// unique insert, where an expired mark may be replaced.
const markSQL = `INSERT INTO seen (key, expires) SELECT k, (SELECT t FROM clk) + $2::bigint FROM unnest($1::text[]) AS k
	ON CONFLICT (key) DO UPDATE SET expires = excluded.expires WHERE seen.expires <= (SELECT t FROM clk)
	RETURNING key`

// seenSQL is Seen: it marks the key as markSQL does and counts the marks
// it made.
const seenSQL = `WITH ` + clockSQL + `, marked AS (` + markSQL + `) SELECT count(*) FROM marked`

// admitSQL is one admission: it marks the keys of $1 as markSQL does and,
// when it marked all of them, queues payload $5 for session key $4 at
// order $7 (0: the database's now in microseconds, never shifted, so
// items admitted one after the other keep their order). It returns the queue seq, or NULL
// when a key was marked already. $6 is the number of keys the caller
// gave: a key given twice counts as marked already, as in the bbolt store.
const admitSQL = `WITH ` + clockSQL + `, marked AS (` + markSQL + `), ins AS (
	INSERT INTO queue (session_key, payload, enqueued, ord)
	SELECT $4, $5, (SELECT t FROM clk), COALESCE(NULLIF($7::bigint, 0), agentbot_now_ns() / 1000)
	WHERE (SELECT count(*) FROM marked) = $6
	RETURNING seq
) SELECT (SELECT seq FROM ins)`

// Seen marks key for ttl and reports whether a live mark existed; an
// existing mark keeps its expiry. Expired marks are swept at most once a
// minute.
func (s *Store) Seen(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := storage.CheckSeen(key, ttl); err != nil {
		return false, err
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	b := &pgx.Batch{}
	shift := s.shift()
	if s.sweeper.Due(time.Now()) {
		b.Queue(sweepSQL, shift)
	}
	var marked int
	b.Queue(seenSQL, []string{key}, ttl.Nanoseconds(), shift).QueryRow(func(row pgx.Row) error { return row.Scan(&marked) })
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return false, fmt.Errorf("seen %q: %w", key, err)
	}
	return marked == 0, nil
}

// Pending returns the session key's queued items in order (by Order, then
// Seq).
func (s *Store) Pending(ctx context.Context, sessionKey string) ([]storage.Queued, error) {
	return s.pending(ctx, sessionKey, "")
}

func (s *Store) pending(ctx context.Context, sessionKey, limit string) ([]storage.Queued, error) {
	if err := storage.CheckKey("session key", sessionKey); err != nil {
		return nil, fmt.Errorf("pending: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT seq, payload, enqueued, ord FROM queue WHERE session_key = $1 ORDER BY ord, seq`+limit, sessionKey)
	if err != nil {
		return nil, fmt.Errorf("pending %q: %w", sessionKey, err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.Queued, error) {
		var (
			q        storage.Queued
			seq, enq int64
		)
		err := row.Scan(&seq, &q.Payload, &enq, &q.Order)
		q.Seq, q.Enqueued = uint64(seq), time.Unix(0, enq)
		return q, err
	})
	if err != nil {
		return nil, fmt.Errorf("pending %q: %w", sessionKey, err)
	}
	return items, nil
}

// PendingKeys returns every session key with queued items, in byte order.
func (s *Store) PendingKeys(ctx context.Context) ([]string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT session_key FROM queue ORDER BY session_key`)
	if err != nil {
		return nil, fmt.Errorf("pending keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("pending keys: %w", err)
	}
	return keys, nil
}

// admitReq is one admission waiting for the committer.
type admitReq struct {
	ctx        context.Context
	keys       []string
	ttl        time.Duration
	sessionKey string
	order      int64
	payload    []byte
	done       chan storage.Admission
}

// Admit marks every dedupe key for ttl and, unless one was marked already
// (dup), queues payload for the session key at order (see
// storage.Inbound), in one transaction; across replicas one admission of
// an event wins. Unlike the bbolt store, it journals nothing locally (it
// returns no journaled channel): it returns at once, and the outcome arrives once the
// admission is committed in the database, so the caller (the bot acks
// Slack's event then) must wait for it. Admissions waiting together are
// applied in call order in one pipelined transaction (one round trip); a
// mark made by an earlier one counts as seen for a later one. Calls that
// do not wait for each other's outcome share commits. An admission whose
// ctx is done before its batch is sent is refused with ctx's error; once
// sent, the batch is not cancelled by one caller's ctx.
func (s *Store) Admit(ctx context.Context, order int64, keys []string, ttl time.Duration, sessionKey string, payload []byte) (<-chan error, <-chan storage.Admission) {
	done := make(chan storage.Admission, 1)
	if err := storage.CheckAdmit(keys, ttl, sessionKey, payload); err != nil {
		done <- storage.Admission{Err: err}
		return nil, done
	}
	if err := ctx.Err(); err != nil {
		done <- storage.Admission{Err: fmt.Errorf("admit %q: %w", sessionKey, err)}
		return nil, done
	}
	s.admitMu.Lock()
	defer s.admitMu.Unlock()
	if s.admitClosed {
		done <- storage.Admission{Err: fmt.Errorf("admit %q: the store is closed", sessionKey)}
		return nil, done
	}
	s.admits <- &admitReq{ctx: ctx, keys: keys, ttl: ttl, sessionKey: sessionKey, order: order, payload: payload, done: done}
	return nil, done
}

// committer applies waiting admissions, as many as are waiting, one batch
// at a time, until the queue is closed.
func (s *Store) committer() {
	defer close(s.admitDone)
	for first := range s.admits {
		batch := storage.Batch(first, s.admits, maxAdmitBatch)
		s.commitAdmissions(batch)
	}
}

// commitAdmissions sends a batch as one pipeline, which PostgreSQL runs as
// one implicit transaction: all of it commits or none.
func (s *Store) commitAdmissions(batch []*admitReq) {
	batch = slices.DeleteFunc(batch, func(r *admitReq) bool {
		if err := r.ctx.Err(); err != nil {
			r.done <- storage.Admission{Err: fmt.Errorf("admit %q: %w", r.sessionKey, err)}
			return true
		}
		return false
	})
	if len(batch) == 0 {
		return
	}
	out := make([]storage.Admission, len(batch))
	shift := s.shift()
	ctx, cancel := s.ctx(context.Background()) // the batch's, not one caller's
	defer cancel()
	b := &pgx.Batch{}
	if s.sweeper.Due(time.Now()) {
		b.Queue(sweepSQL, shift)
	}
	for i, r := range batch {
		keys := slices.Compact(slices.Sorted(slices.Values(r.keys))) // one row may not be marked twice in a statement
		b.Queue(admitSQL, keys, r.ttl.Nanoseconds(), shift, r.sessionKey, r.payload, len(r.keys), r.order).QueryRow(func(row pgx.Row) error {
			var seq *int64
			if err := row.Scan(&seq); err != nil {
				return err
			}
			if seq == nil {
				out[i].Dup = true
			} else {
				out[i].Seq = uint64(*seq)
			}
			return nil
		})
	}
	err := s.admitPool.SendBatch(ctx, b).Close()
	for i, r := range batch {
		if err != nil {
			out[i] = storage.Admission{Err: fmt.Errorf("admit %q: %w", r.sessionKey, err)}
		}
		r.done <- out[i]
	}
}
