package bolt

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// The documents of testdata/v1 (real schema 1 data, written by `agentbot
// chat`) become versions of the terminal project, credited to their
// session and agent, with the bytes the session saved.
func TestMigrateV1DocumentsJoinTheTerminalProject(t *testing.T) {
	ctx := context.Background()
	dir := copyV1(t)
	s := openAt(t, dir, nil)
	sess, err := s.SessionByID(ctx, v1Session)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := s.Documents(ctx, storage.TerminalProject)
	if err != nil || len(docs) != len(transcript.Documents(sess.Outputs)) || len(docs) == 0 {
		t.Fatalf("terminal project documents = %+v, %v; session documents %+v", docs, err, transcript.Documents(sess.Outputs))
	}
	for _, d := range docs {
		if d.Session != v1Session || d.Agent != "product-lead" || d.Thread != sess.Key {
			t.Fatalf("document %+v is not credited to session %s", d, v1Session)
		}
		want, err := os.ReadFile(filepath.Join(dir, "outputs", v1Session, filepath.FromSlash(d.Path)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.DocumentData(ctx, storage.TerminalProject, d.Path, 0)
		if err != nil || string(got) != string(want) {
			t.Fatalf("document %s = %d bytes, %v; the file holds %d", d.Path, len(got), err, len(want))
		}
	}
	// The migration runs once: reopening adds no version.
	s = reopen(t, s, nil)
	again, err := s.Documents(ctx, storage.TerminalProject)
	if err != nil || len(again) != len(docs) || again[0].Version != docs[0].Version {
		t.Fatalf("after a reopen: %+v, %v", again, err)
	}
}

// Data written by today's code (schema 2: each session's documents its
// own) keeps every document version: sessions of one channel make one
// project, their versions interleaved in time order, each credited to its
// session, agent and owner; a DM channel's documents are its own project.
func TestMigrateSchema2KeepsEveryDocument(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	dir := t.TempDir()
	s := openAt(t, dir, c)
	type saved struct{ key, owner, path, data string }
	writes := []saved{
		{"T1/C1/1.1", "U1", "brief.md", "brief v1"},
		{"T1/C1/2.2", "U2", "brief.md", "brief v2 from another thread"},
		{"T1/C1/1.1", "U1", "brief.md", "brief v3"},
		{"T1/C1/2.2", "U2", "prd.md", "prd"},
		{"T1/D7/3.3", "U3", "brief.md", "a DM brief"},
	}
	sessions := map[string]*transcript.Session{}
	for _, w := range writes {
		sess := sessions[w.key]
		if sess == nil {
			if sess, err := s.NewSession(ctx, w.key); err != nil {
				t.Fatal(err)
			} else {
				sessions[w.key] = sess
			}
			sess = sessions[w.key]
			sess.AgentID = "pm"
			sess.SetMeta(metaOwnerKey, w.owner)
		}
		c.Add(time.Minute)
		o := transcript.Output{Path: w.path, Size: int64(len(w.data)), Version: transcript.NextVersion(sess.Outputs, w.path), Time: c.Now()}
		sess.Outputs = append(sess.Outputs, o)
		if err := s.SaveSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		if err := s.PutOutput(ctx, sess.ID, o, []byte(w.data)); err != nil {
			t.Fatal(err)
		}
	}
	// Make it a schema 2 database, as today's code leaves it.
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bucketProjects, bucketProjectChannels} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put([]byte("version"), u64Key(schemaV2))
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, c)
	hist, err := s.DocumentHistory(ctx, storage.ChannelProject("T1", "C1"), "brief.md")
	if err != nil || len(hist) != 3 {
		t.Fatalf("brief.md history = %+v, %v", hist, err)
	}
	for i, want := range []saved{writes[2], writes[1], writes[0]} {
		h := hist[i]
		data, err := s.DocumentData(ctx, storage.ChannelProject("T1", "C1"), "brief.md", h.Version)
		if err != nil || string(data) != want.data || h.Person != want.owner || h.Thread != want.key || h.Agent != "pm" || h.Session != sessions[want.key].ID {
			t.Fatalf("version %d = %+v %q, %v; want %+v", h.Version, h, data, err, want)
		}
	}
	if data, err := s.DocumentData(ctx, storage.ChannelProject("T1", "C1"), "prd.md", 0); err != nil || string(data) != "prd" {
		t.Fatalf("prd.md = %q, %v", data, err)
	}
	if data, err := s.DocumentData(ctx, storage.ChannelProject("T1", "D7"), "brief.md", 0); err != nil || string(data) != "a DM brief" {
		t.Fatalf("the DM's brief = %q, %v", data, err)
	}
	if docs, _ := s.Documents(ctx, storage.ChannelProject("T1", "D7")); len(docs) != 1 {
		t.Fatalf("the DM project holds %+v", docs)
	}
}
