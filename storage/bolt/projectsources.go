package bolt

import (
	"encoding/json"
	"fmt"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// Schema 5 records where each document version was written from
// (DocVersion.Source) and keeps each project's set of them; its migration
// gives the versions an older agentbot wrote theirs.

// migrateSources gives every version stored without a source the one
// storage.LegacySource finds from its thread or its session's key
// (UnknownSource when neither tells), rewriting its record, and fills
// each project's set of sources from its versions.
func migrateSources(tx *bbolt.Tx) error {
	root := tx.Bucket(bucketProjects)
	var names [][]byte
	if err := root.ForEachBucket(func(k []byte) error {
		names = append(names, append([]byte(nil), k...))
		return nil
	}); err != nil {
		return err
	}
	for _, name := range names {
		if err := migrateProjectSources(tx, root.Bucket(name)); err != nil {
			return fmt.Errorf("sources of project %s: %w", name, err)
		}
	}
	return nil
}

// migrateProjectSources migrates the versions of one project bucket.
func migrateProjectSources(tx *bbolt.Tx, b *bbolt.Bucket) error {
	if _, err := b.CreateBucketIfNotExists(bucketSources); err != nil {
		return err
	}
	type record struct{ key, val []byte }
	var rewrite []record
	versions := b.Bucket(bucketVersions)
	err := versions.ForEach(func(k, val []byte) error {
		var v storage.DocVersion
		if err := json.Unmarshal(val, &v); err != nil {
			return fmt.Errorf("version record %q: %w", k, err)
		}
		if v.Source == "" {
			v.Source = storage.LegacySource(v.Thread, sessionKeyOf(tx, v.Session))
			if v.Source == "" {
				return nil
			}
			data, err := json.Marshal(v)
			if err != nil {
				return err
			}
			rewrite = append(rewrite, record{append([]byte(nil), k...), data})
		}
		return addSource(b, v.Source)
	})
	if err != nil {
		return err
	}
	for _, r := range rewrite {
		if err := versions.Put(r.key, r.val); err != nil {
			return err
		}
	}
	return nil
}

// sessionKeyOf is the key of the session with id, "" when there is none
// (or its record cannot be read).
func sessionKeyOf(tx *bbolt.Tx, id string) string {
	if id == "" {
		return ""
	}
	b := tx.Bucket(bucketSessions).Bucket([]byte(id))
	if b == nil {
		return ""
	}
	sess, err := loadMeta(b)
	if err != nil {
		return ""
	}
	return sess.Key
}
