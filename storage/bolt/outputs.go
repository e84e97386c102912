package bolt

import (
	"bytes"
	"context"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Layout of documents: outputs/<session id>/ holds one entry per version,
// keyed path NUL big-endian version, so the versions of a path sort
// together, oldest first.
var bucketOutputs = []byte("outputs")

// outputKey is the key of one version of path.
func outputKey(path string, version uint64) []byte {
	k := make([]byte, 0, len(path)+9)
	k = append(k, path...)
	k = append(k, 0)
	return append(k, u64Key(version)...)
}

// PutOutput stores the bytes of one version of a session's document;
// storing the same path and version again replaces it. The session must
// exist (else storage.ErrNotFound) and o.Version be 1 or more.
func (s *Store) PutOutput(ctx context.Context, sessionID string, o transcript.Output, data []byte) error {
	if err := storage.CheckID(sessionID); err != nil {
		return fmt.Errorf("store document: %w", err)
	}
	if err := storage.CheckOutputPath(o.Path); err != nil {
		return fmt.Errorf("store document of session %s: %w", sessionID, err)
	}
	if o.Version < 1 {
		return fmt.Errorf("store document %s of session %s: version %d (want 1 or more)", o.Path, sessionID, o.Version)
	}
	err := s.update(ctx, func(tx *bbolt.Tx) error {
		if tx.Bucket(bucketSessions).Bucket([]byte(sessionID)) == nil {
			return storage.ErrNotFound
		}
		b, err := tx.Bucket(bucketOutputs).CreateBucketIfNotExists([]byte(sessionID))
		if err != nil {
			return err
		}
		return b.Put(outputKey(o.Path, uint64(o.Version)), data)
	})
	if err != nil {
		return fmt.Errorf("store document %s v%d of session %s: %w", o.Path, o.Version, sessionID, err)
	}
	return nil
}

// OutputData returns the bytes of a stored version of a session's document
// (version 0: the latest), or an error matching storage.ErrNotFound.
func (s *Store) OutputData(ctx context.Context, sessionID, path string, version int) ([]byte, error) {
	if err := storage.CheckID(sessionID); err != nil {
		return nil, fmt.Errorf("load document: %w", err)
	}
	if err := storage.CheckOutputPath(path); err != nil {
		return nil, fmt.Errorf("load document of session %s: %w", sessionID, err)
	}
	if version < 0 {
		return nil, fmt.Errorf("load document %s of session %s: version %d: %w", path, sessionID, version, storage.ErrNotFound)
	}
	var out []byte
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketOutputs).Bucket([]byte(sessionID))
		if b == nil {
			return storage.ErrNotFound
		}
		var v []byte
		if version > 0 {
			v = b.Get(outputKey(path, uint64(version)))
		} else {
			prefix := append([]byte(path), 0)
			c := b.Cursor()
			for k, val := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, val = c.Next() {
				v = val
			}
		}
		if v == nil {
			return storage.ErrNotFound
		}
		out = append([]byte{}, v...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load document %s v%d of session %s: %w", path, version, sessionID, err)
	}
	return out, nil
}

// deleteOutputs drops every stored document of session id.
func deleteOutputs(tx *bbolt.Tx, id string) error {
	root := tx.Bucket(bucketOutputs)
	if root.Bucket([]byte(id)) == nil {
		return nil
	}
	return root.DeleteBucket([]byte(id))
}
