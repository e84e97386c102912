package bolt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Layout of one session: sessions/<id>/ holds "meta" (the session as JSON,
// without Messages) and the bucket "messages" (one JSON message per
// big-endian index, 0-based, contiguous).
var (
	keyMeta        = []byte("meta")
	bucketMessages = []byte("messages")
)

// session returns the session stored under key (Slack uses
// "team/channel/thread"), or an error matching storage.ErrNotFound.
func (s *Store) session(ctx context.Context, key string) (*transcript.Session, error) {
	if err := storage.CheckKey("session key", key); err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	var sess *transcript.Session
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		id := tx.Bucket(bucketKeys).Get([]byte(key))
		if id == nil {
			return storage.ErrNotFound
		}
		var err error
		sess, err = loadSession(tx, string(id))
		return err
	})
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
	var sess *transcript.Session
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		var err error
		sess, err = loadSession(tx, id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	return sess, nil
}

// NewSession creates and stores an empty session for key with a fresh ID
// and Created/Updated set to now. If key already has a session it returns
// an error matching storage.ErrExists and changes nothing.
func (s *Store) NewSession(ctx context.Context, key string) (*transcript.Session, error) {
	if err := storage.CheckKey("session key", key); err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	now := s.now()
	var sess *transcript.Session
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		keys := tx.Bucket(bucketKeys)
		if id := keys.Get([]byte(key)); id != nil {
			return fmt.Errorf("%w (id %s)", storage.ErrExists, id)
		}
		sessions := tx.Bucket(bucketSessions)
		id, err := storage.NewID(func(id string) bool { return sessions.Get([]byte(id)) != nil || sessions.Bucket([]byte(id)) != nil })
		if err != nil {
			return err
		}
		b, err := sessions.CreateBucket([]byte(id))
		if err != nil {
			return err
		}
		if _, err := b.CreateBucket(bucketMessages); err != nil {
			return err
		}
		sess = &transcript.Session{ID: id, Key: key, Created: now, Updated: now}
		if err := putMeta(b, sess); err != nil {
			return err
		}
		return keys.Put([]byte(key), []byte(id))
	})
	if err != nil {
		return nil, fmt.Errorf("new session %q: %w", key, err)
	}
	return sess, nil
}

// SaveSession stores the session's metadata (everything but Messages) and
// appends the messages not stored yet, in one transaction, so the cost is
// O(new messages). It sets sess.Updated to now. The session must have been
// created by NewSession; a transcript shorter than the stored one is an
// error (transcripts only grow).
func (s *Store) SaveSession(ctx context.Context, sess *transcript.Session) error {
	if sess == nil {
		return errors.New("save session: nil session")
	}
	if err := storage.CheckID(sess.ID); err != nil {
		return fmt.Errorf("save session: %w", err)
	}
	sess.Updated = s.now()
	// bbolt's Batch: concurrent saves of different sessions share one
	// commit. The function is idempotent, as Batch may run it again alone.
	err := s.batch(ctx, func(tx *bbolt.Tx) error { return saveTx(tx, sess) })
	if err != nil {
		return fmt.Errorf("save session %s: %w", sess.ID, err)
	}
	return nil
}

// saveTx stores sess's metadata and its messages not stored yet, in tx.
func saveTx(tx *bbolt.Tx, sess *transcript.Session) error {
	b := tx.Bucket(bucketSessions).Bucket([]byte(sess.ID))
	if b == nil {
		return storage.ErrNotFound
	}
	if owner := tx.Bucket(bucketKeys).Get([]byte(sess.Key)); string(owner) != sess.ID {
		return fmt.Errorf("key %q is not this session's key", sess.Key)
	}
	msgs := b.Bucket(bucketMessages)
	if msgs == nil {
		return errors.New("messages bucket missing")
	}
	stored := messageCount(msgs)
	if uint64(len(sess.Messages)) < stored {
		return fmt.Errorf("transcript has %d messages but %d are stored; transcripts only grow", len(sess.Messages), stored)
	}
	for i := stored; i < uint64(len(sess.Messages)); i++ {
		data, err := json.Marshal(&sess.Messages[i])
		if err != nil {
			return fmt.Errorf("encode message %d: %w", i, err)
		}
		if err := msgs.Put(u64Key(i), data); err != nil {
			return fmt.Errorf("store message %d: %w", i, err)
		}
	}
	if err := indexWaiting(tx, sess); err != nil {
		return err
	}
	if err := indexPerson(tx, sess); err != nil { // people.go
		return err
	}
	return putMeta(b, sess)
}

// putMeta writes the session without its messages.
func putMeta(b *bbolt.Bucket, sess *transcript.Session) error {
	data, err := storage.EncodeMeta(sess)
	if err != nil {
		return err
	}
	return b.Put(keyMeta, data)
}

// loadMeta reads a session's metadata; Messages stays nil.
func loadMeta(b *bbolt.Bucket) (*transcript.Session, error) {
	data := b.Get(keyMeta)
	if data == nil {
		return nil, errors.New("session record has no metadata")
	}
	var sess transcript.Session
	if err := json.Unmarshal(data, &sess); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	return &sess, nil
}

// loadSession reads a whole session, messages in order.
func loadSession(tx *bbolt.Tx, id string) (*transcript.Session, error) {
	b := tx.Bucket(bucketSessions).Bucket([]byte(id))
	if b == nil {
		return nil, storage.ErrNotFound
	}
	sess, err := loadMeta(b)
	if err != nil {
		return nil, err
	}
	msgs := b.Bucket(bucketMessages)
	if msgs == nil {
		return nil, errors.New("messages bucket missing")
	}
	sess.Messages = make([]transcript.Message, 0, messageCount(msgs))
	c := msgs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		i := uint64(len(sess.Messages))
		if len(k) != 8 || be64(k) != i {
			return nil, fmt.Errorf("transcript is not contiguous at message %d", i)
		}
		var m transcript.Message
		if err := json.Unmarshal(v, &m); err != nil {
			return nil, fmt.Errorf("decode message %d: %w", i, err)
		}
		sess.Messages = append(sess.Messages, m)
	}
	return sess, nil
}

// messageCount is the number of stored messages: one past the last index.
func messageCount(msgs *bbolt.Bucket) uint64 {
	k, _ := msgs.Cursor().Last()
	if len(k) != 8 {
		return 0
	}
	return be64(k) + 1
}
