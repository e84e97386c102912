package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// PersonSessions lists person's attached sessions from the sessions_owner
// index, most recently updated first, at most limit (<= 0: all); it reads
// no session's metadata or transcript.
func (s *Store) PersonSessions(ctx context.Context, person string, limit int) ([]storage.SessionRef, error) {
	if person == "" {
		return nil, errors.New("person sessions: empty person")
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var lim any // NULL: no limit
	if limit > 0 {
		lim = limit
	}
	rows, _ := s.pool.Query(ctx, `SELECT id, key, updated FROM sessions
		WHERE owner = $1 AND owner <> '' AND attached ORDER BY updated DESC, id LIMIT $2`, person, lim)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (storage.SessionRef, error) {
		var ref storage.SessionRef
		var updated int64
		err := r.Scan(&ref.ID, &ref.Key, &updated)
		ref.Updated = time.Unix(0, updated)
		return ref, err
	})
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", person, err)
	}
	return out, nil
}

// backfillOwners gives every session without an owner column (written
// before migration 0008, or since by an older replica) the one
// storage.OwnerOf reads from its metadata; Open runs it under the
// migration lock, and with nothing to fill it reads one index.
func backfillOwners(ctx context.Context, tx pgx.Tx) error {
	var ids, owners []string
	rows, _ := tx.Query(ctx, `SELECT id, meta FROM sessions WHERE owner IS NULL`)
	for rows.Next() {
		var id string
		var meta []byte
		if err := rows.Scan(&id, &meta); err != nil {
			rows.Close()
			return fmt.Errorf("find sessions without an owner: %w", err)
		}
		var sess transcript.Session
		if err := json.Unmarshal(meta, &sess); err != nil {
			rows.Close()
			return fmt.Errorf("session %s: decode: %w", id, err)
		}
		ids, owners = append(ids, id), append(owners, storage.OwnerOf(&sess))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("find sessions without an owner: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE sessions s SET owner = f.owner
		FROM unnest($1::text[], $2::text[]) AS f(id, owner) WHERE s.id = f.id AND s.owner IS NULL`, ids, owners); err != nil {
		return fmt.Errorf("give sessions their owner: %w", err)
	}
	return nil
}
