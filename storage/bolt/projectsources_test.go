package bolt

import (
	"context"
	"slices"
	"testing"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// TestMigrateV4Sources: versions a version 4 store kept (records without
// a source, projects without a set of them) get the source their thread
// gives, else their session's key, else UnknownSource; the terminal's add
// none; the records say it, and later saves add to the set.
func TestMigrateV4Sources(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	slack, err := s.NewSession(ctx, "T5/C5/9.9")
	if err != nil {
		t.Fatal(err)
	}
	terminal, err := s.NewSession(ctx, "chat/demo")
	if err != nil {
		t.Fatal(err)
	}
	old := map[string][]struct{ path, record string }{
		"old": {
			{"prd.md", `{"path":"prd.md","version":1,"size":1,"thread":"T1/C1/1.1","time":"2026-03-01T09:00:00Z"}`},
			{"brief.md", `{"path":"brief.md","version":1,"size":1,"session":"` + slack.ID + `","time":"2026-03-01T09:00:00Z"}`},
			{"notes.md", `{"path":"notes.md","version":1,"size":1,"session":"` + slack.ID + `","thread":"chat/demo","time":"2026-03-01T09:00:00Z"}`},
			{"term.md", `{"path":"term.md","version":1,"size":1,"session":"` + terminal.ID + `","time":"2026-03-01T09:00:00Z"}`},
		},
		"imported": {{"a.md", `{"path":"a.md","version":1,"size":1,"thread":"agentbot projects import","agent":"import","time":"2026-03-01T09:00:00Z"}`}},
		"orphan":   {{"a.md", `{"path":"a.md","version":1,"size":1,"session":"gone","time":"2026-03-01T09:00:00Z"}`}},
	}
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		for name, docs := range old {
			b, err := tx.Bucket(bucketProjects).CreateBucket([]byte(name))
			if err != nil {
				return err
			}
			if err := b.Put(keyProjectMeta, []byte(`{"name":"`+name+`","created":"2026-03-01T09:00:00Z"}`)); err != nil {
				return err
			}
			for _, sub := range [][]byte{bucketVersions, bucketDocData, bucketHeads} {
				if _, err := b.CreateBucket(sub); err != nil {
					return err
				}
			}
			for _, d := range docs {
				key := outputKey(d.path, 1)
				if err := b.Bucket(bucketVersions).Put(key, []byte(d.record)); err != nil {
					return err
				}
				if err := b.Bucket(bucketDocData).Put(key, []byte("x")); err != nil {
					return err
				}
				if err := b.Bucket(bucketHeads).Put([]byte(d.path), u64Key(1)); err != nil {
					return err
				}
			}
		}
		return tx.Bucket(bucketMeta).Put([]byte("version"), u64Key(schemaV4))
	}); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 2; round++ {
		s = reopen(t, s, nil)
		if v := schemaOf(t, s); v != schemaVersion {
			t.Fatalf("round %d: schema %d after migration", round, v)
		}
		for project, want := range map[string][]string{
			"old":      {"T1/C1", "T5/C5"},
			"imported": {storage.UnknownSource},
			"orphan":   {storage.UnknownSource},
		} {
			if got, err := s.ProjectSources(ctx, project); err != nil || !slices.Equal(got, want) {
				t.Fatalf("round %d: ProjectSources(%s) = %q, %v; want %q", round, project, got, err, want)
			}
		}
	}
	docs, err := s.Documents(ctx, "old")
	if err != nil || len(docs) != 4 {
		t.Fatalf("Documents = %+v, %v", docs, err)
	}
	sources := map[string]string{}
	for _, d := range docs {
		sources[d.Path] = d.Source
	}
	if sources["prd.md"] != "T1/C1" || sources["brief.md"] != "T5/C5" || sources["notes.md"] != "" || sources["term.md"] != "" {
		t.Fatalf("the migrated records' sources = %v", sources)
	}
	if _, err := s.SaveDocument(ctx, "old", storage.DocVersion{Path: "prd.md", Thread: "T2/C2/1.1", Source: "T2/C2"}, 1, []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ProjectSources(ctx, "old"); err != nil || !slices.Equal(got, []string{"T1/C1", "T2/C2", "T5/C5"}) {
		t.Fatalf("ProjectSources after a save = %q, %v", got, err)
	}
}
