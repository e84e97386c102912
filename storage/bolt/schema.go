package bolt

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
)

// Schema versions:
//
//  1. sessions held the engine's Session: go-openai messages and the whole
//     agent definition, host paths included.
//  2. sessions hold transcript.Session and transcript.Message; outputs
//     keep documents' bytes.
//  3. projects hold versioned documents shared by the threads of their
//     channels; the sessions' documents became versions of their
//     channel's project.
//  4. queue items are keyed by order then seq (queueItemKey), not by seq
//     alone, so a thread's messages are answered in Slack's order.
//  5. every document version records its Source, and each project keeps
//     the set of them (projectsources.go).
//  6. credentials and flows hold sealed OAuth credentials and pending
//     authorization flows (credentials.go); an older agentbot, which
//     would not migrate them, refuses the file.
//  7. people and personof index the attached sessions by owner
//     (people.go), filled from the thread state of sessions stored
//     before; an older agentbot would not keep the index, so it refuses
//     the file.
const (
	schemaV1 = 1
	schemaV2 = 2
	schemaV3 = 3
	schemaV4 = 4
	schemaV5 = 5
	schemaV6 = 6
)

// migrateQueueOrder re-keys every queued item by order then seq; an item
// of a version 3 store takes its enqueue time as its order, which keeps
// the order it had.
func migrateQueueOrder(tx *bbolt.Tx) error {
	root := tx.Bucket(bucketQueue)
	var keys [][]byte
	if err := root.ForEachBucket(func(k []byte) error {
		keys = append(keys, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, key := range keys {
		b := root.Bucket(key)
		type kv struct{ k, v []byte }
		var old []kv
		if err := b.ForEach(func(k, v []byte) error {
			if len(k) != 8 || len(v) < 8 {
				return fmt.Errorf("corrupt queue item %x of %q", k, key)
			}
			old = append(old, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			return nil
		}); err != nil {
			return err
		}
		for _, e := range old {
			if err := b.Delete(e.k); err != nil {
				return err
			}
			order := time.Unix(0, int64(be64(e.v[:8]))).UnixMicro()
			if err := b.Put(queueItemKey(order, be64(e.k)), e.v); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyNeedsCompact, in the meta bucket, marks a migrated database whose
// file still holds the old bytes in freed pages; Open compacts it.
var keyNeedsCompact = []byte("needs-compact")

// migrateV1 re-encodes every session of a version 1 store through
// agentbot's own format, in tx: metadata through transcript.Session (the
// old agent definition becomes an AgentSnapshot; its host paths, home and
// config are dropped) and messages through transcript.Message.
func migrateV1(tx *bbolt.Tx) error {
	sessions := tx.Bucket(bucketSessions)
	var ids [][]byte
	if err := sessions.ForEachBucket(func(k []byte) error {
		ids = append(ids, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, id := range ids {
		b := sessions.Bucket(id)
		if data := b.Get(keyMeta); data != nil {
			var sess transcript.Session
			if err := json.Unmarshal(data, &sess); err != nil {
				return fmt.Errorf("migrate session %s: decode: %w", id, err)
			}
			if err := putMeta(b, &sess); err != nil {
				return fmt.Errorf("migrate session %s: %w", id, err)
			}
		}
		msgs := b.Bucket(bucketMessages)
		if msgs == nil {
			continue
		}
		type kv struct{ k, v []byte }
		var out []kv
		if err := msgs.ForEach(func(k, v []byte) error {
			var m transcript.Message
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("decode message %x: %w", k, err)
			}
			data, err := json.Marshal(&m)
			if err != nil {
				return err
			}
			out = append(out, kv{append([]byte(nil), k...), data})
			return nil
		}); err != nil {
			return fmt.Errorf("migrate session %s: %w", id, err)
		}
		for _, e := range out {
			if err := msgs.Put(e.k, e.v); err != nil {
				return fmt.Errorf("migrate session %s: %w", id, err)
			}
		}
	}
	return nil
}

// compact rewrites the database at path into a fresh file, so the pages a
// migration freed (which still hold the old bytes) are gone, and returns
// the reopened database. db is closed. The copy is renamed over the file
// only when whole, so a crash leaves the marked original, compacted at the
// next Open.
func compact(path string, db *bbolt.DB) (*bbolt.DB, error) {
	tmp := path + ".compact"
	_ = os.Remove(tmp)
	dst, err := bbolt.Open(tmp, 0o600, &bbolt.Options{Timeout: lockTimeout})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("compact: %w", err)
	}
	err = bbolt.Compact(dst, db, 0)
	if err == nil {
		err = dst.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyNeedsCompact) })
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("compact: %w", err)
	}
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: lockTimeout})
	if err != nil {
		return nil, fmt.Errorf("compact: reopen: %w", err)
	}
	return db, nil
}
