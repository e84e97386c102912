package bolt

import (
	"context"
	"fmt"
	"sort"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
)

// bucketWaiting indexes the sessions with a tool call waiting for
// approval: session id -> session key. SaveSession keeps it.
var bucketWaiting = []byte("waiting")

// indexWaiting records in tx whether sess waits for an approval.
func indexWaiting(tx *bbolt.Tx, sess *transcript.Session) error {
	b := tx.Bucket(bucketWaiting)
	if len(sess.Pending) == 0 {
		return b.Delete([]byte(sess.ID))
	}
	return b.Put([]byte(sess.ID), []byte(sess.Key))
}

// WaitingSessions lists the keys of the attached sessions with a tool call
// waiting for approval, in key order.
func (s *Store) WaitingSessions(ctx context.Context) ([]string, error) {
	var keys []string
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		owners := tx.Bucket(bucketKeys)
		return tx.Bucket(bucketWaiting).ForEach(func(id, key []byte) error {
			if string(owners.Get(key)) == string(id) {
				keys = append(keys, string(key))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("waiting sessions: %w", err)
	}
	sort.Strings(keys)
	return keys, nil
}
