package storage

import (
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
)

// SetMeta sets one entry of the Meta of the session that holds key ("" as
// value deletes it), reading and writing only the session's metadata,
// never its transcript. No such session is an error matching ErrNotFound.
func (s *Store) SetMeta(key, name, value string) error {
	if err := CheckKey("session key", key); err != nil {
		return fmt.Errorf("set session meta: %w", err)
	}
	err := s.db.Batch(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketKeys).Get([]byte(key))
		if id == nil {
			return ErrNotFound
		}
		b := tx.Bucket(bucketSessions).Bucket(id)
		if b == nil {
			return ErrNotFound
		}
		sess, err := loadMeta(b)
		if err != nil {
			return err
		}
		sess.SetMeta(name, value)
		return putMeta(b, sess)
	})
	if err != nil {
		return fmt.Errorf("set meta %s of session %q: %w", name, key, err)
	}
	return nil
}

// SetMetaJSON is transcript.Session.SetMeta on a session's metadata as JSON (the form
// a store keeps it in).
func SetMetaJSON(meta []byte, name, value string) ([]byte, error) {
	var sess transcript.Session
	if err := json.Unmarshal(meta, &sess); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	sess.SetMeta(name, value)
	return EncodeMeta(&sess)
}
