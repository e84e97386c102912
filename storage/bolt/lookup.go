package bolt

import (
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// FindSession is Session without the sentinel: it returns (nil, nil) when
// key has no session.
func (s *Store) FindSession(ctx context.Context, key string) (*transcript.Session, error) {
	return storage.Found(s.session(ctx, key))
}

// FindMeta returns the metadata of the session key holds, without its
// transcript, or (nil, nil) when key has none.
func (s *Store) FindMeta(ctx context.Context, key string) (*transcript.Session, error) {
	if err := storage.CheckKey("session key", key); err != nil {
		return nil, fmt.Errorf("load session metadata: %w", err)
	}
	var sess *transcript.Session
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		id := tx.Bucket(bucketKeys).Get([]byte(key))
		if id == nil {
			return nil
		}
		var err error
		sess, err = metaTx(tx, string(id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load session metadata %q: %w", key, err)
	}
	return sess, nil
}

// DetachSession frees its key, so the next NewSession for that key starts
// afresh, while the session's data and folders stay (ListSessions shows it,
// Prune and DeleteSession remove it). The bot uses it when a thread
// switches agents, so nothing of the earlier conversation is lost.
func (s *Store) DetachSession(ctx context.Context, id string) error {
	if err := storage.CheckID(id); err != nil {
		return fmt.Errorf("detach session: %w", err)
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		sess, err := metaTx(tx, id)
		if err != nil {
			return err
		}
		keys := tx.Bucket(bucketKeys)
		if string(keys.Get([]byte(sess.Key))) != id {
			return nil
		}
		if err := unindexPerson(tx, id); err != nil { // a detached session is nobody's to list
			return err
		}
		return keys.Delete([]byte(sess.Key))
	})
	if err != nil {
		return fmt.Errorf("detach session %s: %w", id, err)
	}
	return nil
}
