package bolt

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// ListSessions returns every stored session, most recently updated first.
func (s *Store) ListSessions(ctx context.Context) ([]storage.SessionInfo, error) {
	var list []storage.SessionInfo
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return eachSession(tx, func(id string, b *bbolt.Bucket, sess *transcript.Session) error {
			n := 0
			if msgs := b.Bucket(bucketMessages); msgs != nil {
				n = int(messageCount(msgs))
			}
			list = append(list, storage.SessionInfo{
				ID: id, Key: sess.Key, AgentID: sess.AgentID,
				Messages: n, Outputs: len(sess.Outputs), Usage: sess.Usage,
				Created: sess.Created, Updated: sess.Updated,
			})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].Updated.After(list[j].Updated) })
	return list, nil
}

// DeleteSession removes the session's data and its outputs and inputs
// folders. An unknown id is an error matching storage.ErrNotFound. Queued
// inbound messages for its key are kept.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	if err := storage.CheckID(id); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		sess, err := metaTx(tx, id)
		if err != nil {
			return err
		}
		return deleteSession(tx, id, sess.Key)
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return s.removeSessionDirs(id)
}

// Prune deletes every session last updated before olderThan, with its
// folders, and returns their ids.
func (s *Store) Prune(ctx context.Context, olderThan time.Time) ([]string, error) {
	var ids []string
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		keys := map[string]string{}
		err := eachSession(tx, func(id string, _ *bbolt.Bucket, sess *transcript.Session) error {
			if sess.Updated.Before(olderThan) {
				ids = append(ids, id)
				keys[id] = sess.Key
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := deleteSession(tx, id, keys[id]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("prune sessions: %w", err)
	}
	var errs []error
	for _, id := range ids {
		errs = append(errs, s.removeSessionDirs(id))
	}
	if err := errors.Join(errs...); err != nil {
		return ids, fmt.Errorf("prune sessions: %w", err)
	}
	return ids, nil
}

// eachSession calls fn with every session's metadata, in id order.
func eachSession(tx *bbolt.Tx, fn func(id string, b *bbolt.Bucket, sess *transcript.Session) error) error {
	sessions := tx.Bucket(bucketSessions)
	return sessions.ForEachBucket(func(k []byte) error {
		b := sessions.Bucket(k)
		sess, err := loadMeta(b)
		if err != nil {
			return fmt.Errorf("session %s: %w", k, err)
		}
		return fn(string(k), b, sess)
	})
}

// deleteSession drops a session's bucket, its stored documents and its
// key, if the key still points at it.
func deleteSession(tx *bbolt.Tx, id, key string) error {
	if err := tx.Bucket(bucketSessions).DeleteBucket([]byte(id)); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	if err := deleteOutputs(tx, id); err != nil {
		return fmt.Errorf("delete documents of session %s: %w", id, err)
	}
	if err := tx.Bucket(bucketWaiting).Delete([]byte(id)); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	if err := unindexPerson(tx, id); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	keys := tx.Bucket(bucketKeys)
	if key != "" && string(keys.Get([]byte(key))) == id {
		if err := keys.Delete([]byte(key)); err != nil {
			return fmt.Errorf("delete key of session %s: %w", id, err)
		}
	}
	return nil
}

// metaTx loads a session's metadata inside tx, or storage.ErrNotFound.
func metaTx(tx *bbolt.Tx, id string) (*transcript.Session, error) {
	b := tx.Bucket(bucketSessions).Bucket([]byte(id))
	if b == nil {
		return nil, storage.ErrNotFound
	}
	return loadMeta(b)
}
