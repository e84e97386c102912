package storage

import (
	"errors"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
)

// SessionInfo summarises one stored session.
type SessionInfo struct {
	ID       string           `json:"id"`
	Key      string           `json:"key"`
	AgentID  string           `json:"agent_id"`
	Messages int              `json:"messages"`
	Outputs  int              `json:"outputs"`
	Usage    transcript.Usage `json:"usage"`
	Created  time.Time        `json:"created"`
	Updated  time.Time        `json:"updated"`
}

// ListSessions returns every stored session, most recently updated first.
func (s *Store) ListSessions() ([]SessionInfo, error) {
	var list []SessionInfo
	err := s.db.View(func(tx *bolt.Tx) error {
		return eachSession(tx, func(id string, b *bolt.Bucket, sess *transcript.Session) error {
			n := 0
			if msgs := b.Bucket(bucketMessages); msgs != nil {
				n = int(messageCount(msgs))
			}
			list = append(list, SessionInfo{
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
// folders. An unknown id is an error matching ErrNotFound. Queued inbound
// messages for its key are kept.
func (s *Store) DeleteSession(id string) error {
	if err := CheckID(id); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
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
func (s *Store) Prune(olderThan time.Time) ([]string, error) {
	var ids []string
	err := s.db.Update(func(tx *bolt.Tx) error {
		keys := map[string]string{}
		err := eachSession(tx, func(id string, _ *bolt.Bucket, sess *transcript.Session) error {
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
func eachSession(tx *bolt.Tx, fn func(id string, b *bolt.Bucket, sess *transcript.Session) error) error {
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
func deleteSession(tx *bolt.Tx, id, key string) error {
	if err := tx.Bucket(bucketSessions).DeleteBucket([]byte(id)); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	if err := deleteOutputs(tx, id); err != nil {
		return fmt.Errorf("delete documents of session %s: %w", id, err)
	}
	if err := tx.Bucket(bucketWaiting).Delete([]byte(id)); err != nil {
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

// metaTx loads a session's metadata inside tx, or ErrNotFound.
func metaTx(tx *bolt.Tx, id string) (*transcript.Session, error) {
	b := tx.Bucket(bucketSessions).Bucket([]byte(id))
	if b == nil {
		return nil, ErrNotFound
	}
	return loadMeta(b)
}
