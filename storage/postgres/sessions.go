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

var _ storage.Backend = (*Store)(nil)

// sessionSQL loads a session's metadata and its messages, as a JSON array
// in order, in one round trip.
const sessionSQL = `SELECT s.meta, (SELECT '['::bytea || coalesce(string_agg(m.body, ','::bytea ORDER BY m.idx), '') || ']'::bytea
	FROM messages m WHERE m.session_id = s.id) FROM sessions s `

// scanSession decodes one row of sessionSQL.
func (s *Store) scanSession(row pgx.Row) (*transcript.Session, error) {
	var meta, msgs []byte
	if err := row.Scan(&meta, &msgs); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, storage.ErrNotFound
		}
		return nil, err
	}
	var sess transcript.Session
	if err := json.Unmarshal(meta, &sess); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	if err := json.Unmarshal(msgs, &sess.Messages); err != nil {
		return nil, fmt.Errorf("decode messages: %w", err)
	}
	s.setCount(sess.ID, len(sess.Messages))
	return &sess, nil
}

// setCount records a session's stored message count (-1 forgets it).
func (s *Store) setCount(id string, n int) {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	if n < 0 {
		delete(s.counts, id)
		return
	}
	if len(s.counts) >= 100_000 {
		clear(s.counts) // a hint only: forget rather than grow
	}
	s.counts[id] = n
}

func (s *Store) count(id string) int {
	s.countMu.Lock()
	defer s.countMu.Unlock()
	return s.counts[id]
}

// session returns the session stored under key, or an error matching
// storage.ErrNotFound.
func (s *Store) session(ctx context.Context, key string) (*transcript.Session, error) {
	if err := storage.CheckKey("session key", key); err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	sess, err := s.scanSession(s.pool.QueryRow(ctx, sessionSQL+`WHERE s.key = $1 AND s.attached`, key))
	if err != nil {
		return nil, fmt.Errorf("load session %q: %w", key, err)
	}
	return sess, nil
}

// SessionByID returns the session with the given id, or an error matching
// storage.ErrNotFound.
func (s *Store) SessionByID(ctx context.Context, id string) (*transcript.Session, error) {
	if err := storage.CheckID(id); err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	sess, err := s.scanSession(s.pool.QueryRow(ctx, sessionSQL+`WHERE s.id = $1`, id))
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	return sess, nil
}

// FindSession is Session returning (nil, nil) when key has no session.
func (s *Store) FindSession(ctx context.Context, key string) (*transcript.Session, error) {
	return storage.Found(s.session(ctx, key))
}

// FindMeta returns the metadata of the session key holds, without its
// messages (one small row), or (nil, nil) when key has none.
func (s *Store) FindMeta(ctx context.Context, key string) (*transcript.Session, error) {
	if err := storage.CheckKey("session key", key); err != nil {
		return nil, fmt.Errorf("load session metadata: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var meta []byte
	err := s.pool.QueryRow(ctx, `SELECT meta FROM sessions WHERE key = $1 AND attached`, key).Scan(&meta)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load session metadata %q: %w", key, err)
	}
	var sess transcript.Session
	if err := json.Unmarshal(meta, &sess); err != nil {
		return nil, fmt.Errorf("load session metadata %q: decode: %w", key, err)
	}
	return &sess, nil
}

// NewSession creates and stores an empty session for key with a fresh id;
// if key has a session already it returns an error matching
// storage.ErrExists and changes nothing.
func (s *Store) NewSession(ctx context.Context, key string) (*transcript.Session, error) {
	if err := storage.CheckKey("session key", key); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	now := s.now()
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	for try := 0; ; try++ {
		id, err := storage.NewID(func(string) bool { return false })
		if err != nil {
			return nil, err
		}
		sess := &transcript.Session{ID: id, Key: key, Created: now, Updated: now}
		meta, err := storage.EncodeMeta(sess)
		if err != nil {
			return nil, err
		}
		var other string
		err = s.pool.QueryRow(ctx, `WITH ins AS (
				INSERT INTO sessions (id, key, meta, created, updated, owner) VALUES ($1, $2, $3, $4, $4, '')
				ON CONFLICT (key) WHERE attached DO NOTHING RETURNING id)
			SELECT coalesce((SELECT id FROM ins), (SELECT id FROM sessions WHERE key = $2 AND attached), '')`,
			id, key, meta, now.UnixNano()).Scan(&other)
		if isUnique(err) && try < 3 {
			continue // the random id is taken (or a racing insert took the key): again
		}
		if err != nil {
			return nil, fmt.Errorf("new session %q: %w", key, err)
		}
		if other != id {
			return nil, fmt.Errorf("new session %q: %w (id %s)", key, storage.ErrExists, other)
		}
		s.setCount(id, 0)
		return sess, nil
	}
}

// saveSQL appends the messages past the stored count and writes the
// metadata, in one statement, when the session holds key, the stored
// count is at least $3 (the index of the first message sent) and at most
// $4 (the transcript's length), and, when $9 is true, the fence ($2, $10,
// $11) is the live lease (see checkFenceSQL); $12 is the session's owner
// (storage.OwnerOf), indexed for PersonSessions. It returns what it found, so the
// caller can tell why nothing was written.
const saveSQL = `WITH fence AS (
	SELECT 1 FROM leases WHERE key = $2 AND holder = $10 AND token = $11 AND expires > clock_timestamp() FOR SHARE
), cur AS (
	SELECT id, messages AS n, key, attached FROM sessions WHERE id = $1 FOR UPDATE
), ok AS (
	SELECT id, n FROM cur WHERE attached AND key = $2 AND n >= $3 AND n <= $4
	AND (NOT $9 OR EXISTS (SELECT 1 FROM fence))
), ins AS (
	INSERT INTO messages (session_id, idx, body)
	SELECT ok.id, $3 + t.ord - 1, t.m FROM ok, unnest($5::bytea[]) WITH ORDINALITY AS t(m, ord)
	WHERE $3 + t.ord - 1 >= ok.n
), up AS (
	UPDATE sessions SET meta = $6, messages = $4, updated = $7, waiting = $8, owner = $12 FROM ok WHERE sessions.id = ok.id
)
SELECT n, key, attached, EXISTS (SELECT 1 FROM fence) FROM cur`

// SaveSession stores the session's metadata and appends the messages not
// stored yet, in one statement that sends only those messages when the
// store knows the stored count. It sets sess.Updated. The session must
// hold its key (not detached); a transcript shorter than the stored one is
// an error, as transcripts only grow.
func (s *Store) SaveSession(ctx context.Context, sess *transcript.Session) error {
	return s.save(ctx, sess, nil)
}

// SaveSessionFenced is SaveSession under f, in the same statement as the
// check of the fence.
func (s *Store) SaveSessionFenced(ctx context.Context, f storage.Fence, sess *transcript.Session) error {
	if err := storage.CheckFence(f); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	if sess != nil && sess.Key != f.Key {
		return fmt.Errorf("save session %s: key %q is not the fence's %q", sess.ID, sess.Key, f.Key)
	}
	return s.save(ctx, sess, &f)
}

// save is SaveSession, under f unless it is nil.
func (s *Store) save(ctx context.Context, sess *transcript.Session, f *storage.Fence) error {
	if sess == nil {
		return errors.New("save session: nil session")
	}
	if err := storage.CheckID(sess.ID); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	sess.Updated = s.now()
	meta, err := storage.EncodeMeta(sess)
	if err != nil {
		return fmt.Errorf("save session %s: %w", sess.ID, err)
	}
	total := len(sess.Messages)
	from := min(s.count(sess.ID), total)
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	for range 2 {
		msgs, err := encodeMessages(sess, from)
		if err != nil {
			return err
		}
		var r saveResult
		var ff storage.Fence
		if f != nil {
			ff = *f
		}
		err = s.pool.QueryRow(ctx, saveSQL, sess.ID, sess.Key, from, total, msgs, meta, sess.Updated.UnixNano(), len(sess.Pending) > 0,
			f != nil, ff.Holder, int64(ff.Token), storage.OwnerOf(sess)).Scan(&r.stored, &r.key, &r.attached, &r.fenceHeld)
		retry, err := r.check(sess, err, f != nil, from)
		if err != nil {
			return err
		}
		if retry {
			from = r.stored // the cached count was ahead: send from the stored one
			continue
		}
		s.setCount(sess.ID, total)
		return nil
	}
	return fmt.Errorf("save session %s: the stored transcript changed while saving", sess.ID)
}

// encodeMessages encodes sess's messages from index from on.
func encodeMessages(sess *transcript.Session, from int) ([][]byte, error) {
	msgs := make([][]byte, 0, len(sess.Messages)-from)
	for i := from; i < len(sess.Messages); i++ {
		data, err := json.Marshal(&sess.Messages[i])
		if err != nil {
			return nil, fmt.Errorf("save session %s: encode message %d: %w", sess.ID, i, err)
		}
		msgs = append(msgs, data)
	}
	return msgs, nil
}

// saveResult is what saveSQL found.
type saveResult struct {
	stored              int
	key                 string
	attached, fenceHeld bool
}

// check says why saveSQL wrote nothing, if it did not: an error, or retry
// (the cached count was ahead of the stored one).
func (r saveResult) check(sess *transcript.Session, err error, fenced bool, from int) (retry bool, _ error) {
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, fmt.Errorf("save session %s: %w", sess.ID, storage.ErrNotFound)
	case err != nil:
		return false, fmt.Errorf("save session %s: %w", sess.ID, err)
	case fenced && !r.fenceHeld:
		return false, fmt.Errorf("save session %s: %w", sess.ID, storage.ErrFenced)
	case !r.attached || r.key != sess.Key:
		return false, fmt.Errorf("save session %s: key %q is not this session's key", sess.ID, sess.Key)
	case r.stored > len(sess.Messages):
		return false, fmt.Errorf("save session %s: transcript has %d messages but %d are stored; transcripts only grow", sess.ID, len(sess.Messages), r.stored)
	}
	return r.stored < from, nil
}

// DetachSession frees the session's key, so the next NewSession for it
// starts afresh, and keeps the session's data and folders.
func (s *Store) DetachSession(ctx context.Context, id string) error {
	if err := storage.CheckID(id); err != nil {
		return fmt.Errorf("detach session: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `UPDATE sessions SET attached = false WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = storage.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("detach session %s: %w", id, err)
	}
	return nil
}

// DeleteSession removes the session with its transcript, its documents
// and its local folders; queued inbound messages for its key are kept.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := storage.CheckID(id); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id)
	if err == nil && tag.RowsAffected() == 0 {
		err = storage.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	s.setCount(id, -1)
	return s.removeSessionDirs(id)
}

// Prune deletes every session last updated before olderThan, with its
// folders, and returns their ids.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) ([]string, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `DELETE FROM sessions WHERE updated < $1 RETURNING id`, olderThan.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("prune sessions: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("prune sessions: %w", err)
	}
	var errs []error
	for _, id := range ids {
		s.setCount(id, -1)
		errs = append(errs, s.removeSessionDirs(id))
	}
	if err := errors.Join(errs...); err != nil {
		return ids, fmt.Errorf("prune sessions: %w", err)
	}
	return ids, nil
}

// ListSessions returns every stored session, most recently updated first.
func (s *Store) ListSessions(ctx context.Context) ([]storage.SessionInfo, error) {
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT id, meta, messages FROM sessions ORDER BY updated DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var list []storage.SessionInfo
	for rows.Next() {
		var (
			id   string
			meta []byte
			n    int
		)
		if err := rows.Scan(&id, &meta, &n); err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		var sess transcript.Session
		if err := json.Unmarshal(meta, &sess); err != nil {
			return nil, fmt.Errorf("list sessions: session %s: %w", id, err)
		}
		info := storage.SessionInfo{ID: id, Key: sess.Key, AgentID: sess.AgentID, Messages: n,
			Outputs: len(sess.Outputs), Created: sess.Created, Updated: sess.Updated}
		// Field by field: SessionInfo.Usage carries the same counts.
		info.Usage.Prompt, info.Usage.Cached = sess.Usage.Prompt, sess.Usage.Cached
		info.Usage.Completion, info.Usage.Calls = sess.Usage.Completion, sess.Usage.Calls
		list = append(list, info)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return list, nil
}

// PutOutput stores the bytes of one version of a session's document;
// storing the same path and version again replaces it. An unknown session
// is an error matching storage.ErrNotFound.
func (s *Store) PutOutput(ctx context.Context, sessionID string, o transcript.Output, data []byte) error {
	if err := storage.CheckID(sessionID); err != nil {
		return fmt.Errorf("put output: %w", err)
	}
	if err := storage.CheckOutputPath(o.Path); err != nil {
		return fmt.Errorf("put output of session %s: %w", sessionID, err)
	}
	if o.Version <= 0 {
		return fmt.Errorf("put output %s of session %s: version must be positive, got %d", o.Path, sessionID, o.Version)
	}
	if data == nil {
		data = []byte{}
	}
	t := o.Time
	if t.IsZero() {
		t = s.now()
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO outputs (session_id, path, version, size, time, data) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (session_id, path, version) DO UPDATE SET size = excluded.size, time = excluded.time, data = excluded.data`,
		sessionID, o.Path, o.Version, int64(len(data)), t, data)
	if isForeignKey(err) {
		err = storage.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("put output %s v%d of session %s: %w", o.Path, o.Version, sessionID, err)
	}
	return nil
}

// OutputData returns the bytes of a stored version of a session's
// document; version 0 is the latest. A missing one is an error matching
// storage.ErrNotFound.
func (s *Store) OutputData(ctx context.Context, sessionID, path string, version int) ([]byte, error) {
	if err := storage.CheckID(sessionID); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	if err := storage.CheckOutputPath(path); err != nil {
		return nil, fmt.Errorf("output of session %s: %w", sessionID, err)
	}
	if version < 0 {
		return nil, fmt.Errorf("output %s v%d of session %s: %w", path, version, sessionID, storage.ErrNotFound)
	}
	ctx, cancel := s.ctx(ctx)
	defer cancel()
	var data []byte
	err := s.pool.QueryRow(ctx, `SELECT data FROM outputs WHERE session_id = $1 AND path = $2 AND ($3 = 0 OR version = $3)
		ORDER BY version DESC LIMIT 1`, sessionID, path, version).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		err = storage.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("output %s v%d of session %s: %w", path, version, sessionID, err)
	}
	return data, nil
}
