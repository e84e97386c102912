package bolt

import (
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// SetMeta sets one entry of the Meta of the session that holds key ("" as
// value deletes it), reading and writing only the session's metadata,
// never its transcript. No such session is an error matching
// storage.ErrNotFound.
func (s *Store) SetMeta(ctx context.Context, key, name, value string) error {
	if err := storage.CheckKey("session key", key); err != nil {
		return fmt.Errorf("set session meta: %w", err)
	}
	err := s.batch(ctx, func(tx *bbolt.Tx) error { return setMetaTx(tx, key, map[string]string{name: value}) })
	if err != nil {
		return fmt.Errorf("set meta %s of session %q: %w", name, key, err)
	}
	return nil
}

// setMetaTx sets entries of the Meta of key's session in tx; no such
// session is storage.ErrNotFound.
func setMetaTx(tx *bbolt.Tx, key string, entries map[string]string) error {
	id := tx.Bucket(bucketKeys).Get([]byte(key))
	if id == nil {
		return storage.ErrNotFound
	}
	b := tx.Bucket(bucketSessions).Bucket(id)
	if b == nil {
		return storage.ErrNotFound
	}
	sess, err := loadMeta(b)
	if err != nil {
		return err
	}
	for name, value := range entries {
		sess.SetMeta(name, value)
	}
	return putMeta(b, sess)
}
