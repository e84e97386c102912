package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// The PostgreSQL store takes sessions whole (agentbot migrate).
var _ storage.Importer = (*Store)(nil)

// ImportSession stores sess as it is, with its id, key, times and whole
// transcript, in one transaction; attached says whether it holds its key.
// It reports false and changes nothing when a session with that id exists
// already. A session that holds a key another session holds is an error
// matching storage.ErrExists.
func (s *Store) ImportSession(ctx context.Context, sess *transcript.Session, attached bool) (bool, error) {
	if sess == nil {
		return false, fmt.Errorf("import session: nil session")
	}
	if err := storage.CheckID(sess.ID); err != nil {
		return false, fmt.Errorf("import session: %w", err)
	}
	if err := storage.CheckKey("session key", sess.Key); err != nil {
		return false, fmt.Errorf("import session %s: %w", sess.ID, err)
	}
	meta, err := storage.EncodeMeta(sess)
	if err != nil {
		return false, fmt.Errorf("import session %s: %w", sess.ID, err)
	}
	msgs := make([][]byte, len(sess.Messages))
	for i := range sess.Messages {
		if msgs[i], err = json.Marshal(&sess.Messages[i]); err != nil {
			return false, fmt.Errorf("import session %s: encode message %d: %w", sess.ID, i, err)
		}
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("import session %s: %w", sess.ID, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	tag, err := tx.Exec(ctx, `INSERT INTO sessions (id, key, attached, meta, messages, created, updated, waiting, owner)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
		sess.ID, sess.Key, attached, meta, len(msgs), sess.Created.UnixNano(), sess.Updated.UnixNano(), len(sess.Pending) > 0, storage.OwnerOf(sess))
	if isUnique(err) {
		return false, fmt.Errorf("import session %s: key %q: %w", sess.ID, sess.Key, storage.ErrExists)
	}
	if err != nil {
		return false, fmt.Errorf("import session %s: %w", sess.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO messages (session_id, idx, body)
		SELECT $1, t.ord - 1, t.m FROM unnest($2::bytea[]) WITH ORDINALITY AS t(m, ord)`, sess.ID, msgs); err != nil {
		return false, fmt.Errorf("import session %s: messages: %w", sess.ID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("import session %s: %w", sess.ID, err)
	}
	s.setCount(sess.ID, len(msgs))
	return true, nil
}
