package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
)

// SetMeta sets one entry of the Meta of the session that holds key ("" as
// value deletes it) in one transaction that reads and writes the session's
// metadata only, never its messages. No such session is an error matching
// storage.ErrNotFound.
func (s *Store) SetMeta(ctx context.Context, key, name, value string) error {
	if err := storage.CheckKey("session key", key); err != nil {
		return fmt.Errorf("set session meta: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return setMetaTx(ctx, tx, key, map[string]string{name: value})
	})
	if err != nil {
		return fmt.Errorf("set meta %s of session %q: %w", name, key, err)
	}
	return nil
}

// setMetaTx sets entries of the Meta of key's session in tx; no such
// session is storage.ErrNotFound. No entries is no write.
func setMetaTx(ctx context.Context, tx pgx.Tx, key string, entries map[string]string) error {
	if len(entries) == 0 {
		return nil
	}
	var id string
	var meta []byte
	err := tx.QueryRow(ctx, `SELECT id, meta FROM sessions WHERE key = $1 AND attached FOR UPDATE`, key).Scan(&id, &meta)
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.ErrNotFound
	}
	if err != nil {
		return err
	}
	for name, value := range entries {
		if meta, err = storage.SetMetaJSON(meta, name, value); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, `UPDATE sessions SET meta = $2 WHERE id = $1`, id, meta)
	return err
}
