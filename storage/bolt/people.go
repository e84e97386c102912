package bolt

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// The person index (storage.SessionIndex): bucketPeople holds a bucket
// per person, whose keys are the inverted Updated of each of their
// attached sessions (math.MaxUint64 - UnixNano, 8 bytes) then its id, so a
// cursor reads the newest first; the value is the session's key.
// bucketPersonOf maps a session id to its entry there (Updated, 8 bytes,
// then the person), so a save moves the entry without reading the old
// metadata. saveTx keeps both; DetachSession and deleteSession drop a
// session's entry; Open fills them for a store of schema 6 or older
// (migrateOwners).
var (
	bucketPeople   = []byte("people")
	bucketPersonOf = []byte("personof")
)

// peopleKey is a session's key in its person's bucket.
func peopleKey(updated int64, id string) []byte {
	return append(u64Key(math.MaxUint64-uint64(updated)), id...)
}

// indexPerson files sess under its owner (storage.OwnerOf), at its
// Updated, in place of its earlier entry.
func indexPerson(tx *bbolt.Tx, sess *transcript.Session) error {
	if err := unindexPerson(tx, sess.ID); err != nil {
		return err
	}
	owner := storage.OwnerOf(sess)
	if owner == "" {
		return nil
	}
	b, err := tx.Bucket(bucketPeople).CreateBucketIfNotExists([]byte(owner))
	if err != nil {
		return fmt.Errorf("index session %s: %w", sess.ID, err)
	}
	updated := sess.Updated.UnixNano()
	if err := b.Put(peopleKey(updated, sess.ID), []byte(sess.Key)); err != nil {
		return fmt.Errorf("index session %s: %w", sess.ID, err)
	}
	return tx.Bucket(bucketPersonOf).Put([]byte(sess.ID), append(u64Key(uint64(updated)), owner...))
}

// unindexPerson drops session id's entry from the person index, if any.
func unindexPerson(tx *bbolt.Tx, id string) error {
	of := tx.Bucket(bucketPersonOf)
	old := of.Get([]byte(id))
	if old == nil {
		return nil
	}
	if len(old) < 8 {
		return fmt.Errorf("corrupt person index entry of session %s", id)
	}
	if b := tx.Bucket(bucketPeople).Bucket(old[8:]); b != nil {
		if err := b.Delete(peopleKey(int64(be64(old[:8])), id)); err != nil {
			return err
		}
	}
	return of.Delete([]byte(id))
}

// PersonSessions lists person's attached sessions from the person index,
// most recently updated first, at most limit (<= 0: all); it reads no
// session.
func (s *Store) PersonSessions(ctx context.Context, person string, limit int) ([]storage.SessionRef, error) {
	if person == "" {
		return nil, errors.New("person sessions: empty person")
	}
	var out []storage.SessionRef
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		b := tx.Bucket(bucketPeople).Bucket([]byte(person))
		if b == nil {
			return nil
		}
		keys := tx.Bucket(bucketKeys)
		c := b.Cursor()
		for k, v := c.First(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Next() {
			if len(k) <= 8 {
				return fmt.Errorf("corrupt person index key %x", k)
			}
			id := string(k[8:])
			if string(keys.Get(v)) != id {
				continue // detached meanwhile (DetachSession drops it too)
			}
			out = append(out, storage.SessionRef{ID: id, Key: string(v), Updated: time.Unix(0, int64(math.MaxUint64-be64(k[:8])))})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", person, err)
	}
	return out, nil
}

// migrateOwners (schema 6 to 7) creates the person index and files every
// attached session in it, its owner read as storage.OwnerOf reads it
// (from the bot's thread state, for sessions stored before Owner).
func migrateOwners(tx *bbolt.Tx) error {
	if err := createBuckets(tx, bucketPeople, bucketPersonOf); err != nil {
		return err
	}
	sessions := tx.Bucket(bucketSessions)
	return tx.Bucket(bucketKeys).ForEach(func(key, id []byte) error {
		b := sessions.Bucket(id)
		if b == nil {
			return nil
		}
		sess, err := loadMeta(b)
		if err != nil {
			return fmt.Errorf("index session %s: %w", id, err)
		}
		return indexPerson(tx, sess)
	})
}
