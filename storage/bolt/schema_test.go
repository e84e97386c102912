package bolt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/fixtures"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/storetest"
)

// v1Session is the session in testdata/v1, written by the schema 1 code
// through `agentbot chat --agent product-lead`.
const v1Session = "lgjnajbfftn7e"

// openV1 copies testdata/v1 to a temp folder and returns the folder.
func copyV1(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fixtures.CopyDir(t, filepath.Join("testdata", "v1"), dir)
	return dir
}

func schemaOf(t *testing.T, s *Store) uint64 {
	t.Helper()
	var v uint64
	if err := s.db.View(func(tx *bbolt.Tx) error {
		v = be64(tx.Bucket(bucketMeta).Get([]byte("version")))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrateV1(t *testing.T) {
	ctx := context.Background()
	dir := copyV1(t)
	old, err := os.ReadFile(filepath.Join(dir, DBName))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(old, []byte("/work/")) {
		t.Fatal("testdata/v1 has no host path; the test would prove nothing")
	}
	for round := 1; round <= 2; round++ {
		s := openAt(t, dir, nil)
		if v := schemaOf(t, s); v != schemaVersion || schemaVersion != 7 {
			t.Fatalf("round %d: schema version = %d, want 7", round, v)
		}
		sess, err := s.SessionByID(ctx, v1Session)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(sess.Messages) < 7 || sess.Messages[0].Role != transcript.RoleSystem {
			t.Fatalf("round %d: %d messages, first %q", round, len(sess.Messages), sess.Messages[0].Role)
		}
		var calls, results int
		for _, m := range sess.Messages {
			calls += len(m.ToolCalls)
			if m.Role == transcript.RoleTool && m.ToolCallID != "" {
				results++
			}
		}
		if calls == 0 || results == 0 {
			t.Fatalf("round %d: tool calls %d, results %d", round, calls, results)
		}
		if len(sess.Outputs) == 0 || transcript.Latest(sess.Outputs)[0].Path != "product-brief.md" {
			t.Fatalf("round %d: outputs %+v", round, sess.Outputs)
		}
		if sess.AgentID != "product-lead" || sess.Agent == nil || sess.Agent.ID != "product-lead" || sess.Agent.Module != "product-team" || sess.Agent.Name == "" {
			t.Fatalf("round %d: agent %q snapshot %+v", round, sess.AgentID, sess.Agent)
		}
		if sess.Unfinished() {
			t.Fatalf("round %d: the finished turn reads as unfinished", round)
		}
		loaded, err := json.Marshal(sess)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(loaded, []byte("/work/")) || bytes.Contains(loaded, []byte("product-lead.md")) {
			t.Fatalf("round %d: loaded session keeps a host path: %s", round, loaded)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, DBName))
		if err != nil {
			t.Fatal(err)
		}
		for _, needle := range []string{"/work/", "/bundles/product-team/agents/product-lead.md", `"home"`, `"persona"`} {
			if bytes.Contains(raw, []byte(needle)) {
				t.Fatalf("round %d: the database file still holds %q", round, needle)
			}
		}
	}
}

// A compaction cut short (the mark survives) runs at the next Open.
func TestMigrateCompactionResumes(t *testing.T) {
	dir := copyV1(t)
	s := openAt(t, dir, nil)
	var marked bool
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		marked = tx.Bucket(bucketMeta).Get(keyNeedsCompact) != nil
		return tx.Bucket(bucketMeta).Put([]byte("junk"), []byte("/work/leftover"))
	}); err != nil {
		t.Fatal(err)
	}
	// Leave old bytes behind in a freed page, as a migration does, and
	// the mark, as a crash before the rename does.
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Delete([]byte("junk")); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(keyNeedsCompact, []byte{1})
	}); err != nil {
		t.Fatal(err)
	}
	if raw, err := os.ReadFile(filepath.Join(dir, DBName)); err != nil || !bytes.Contains(raw, []byte("/work/leftover")) {
		t.Fatalf("the freed page does not hold the old bytes; the test would prove nothing (%v)", err)
	}
	if marked {
		t.Fatal("the compaction mark outlived a finished compaction")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, dir, nil)
	if err := s.db.View(func(tx *bbolt.Tx) error {
		marked = tx.Bucket(bucketMeta).Get(keyNeedsCompact) != nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, DBName))
	if err != nil {
		t.Fatal(err)
	}
	if marked || bytes.Contains(raw, []byte("/work/")) {
		t.Fatalf("the interrupted compaction did not run again (mark %v)", marked)
	}
}

func TestMigrateNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte("version"), u64Key(schemaVersion+1))
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte(fmt.Sprintf("schema version %d is newer than this agentbot supports (%d)", schemaVersion+1, schemaVersion))) {
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

// TestMigrateV2QueueOrder: items a version 2 store queued (keyed by seq
// alone) are re-keyed by their enqueue time, keep their order, and can be
// dequeued; the token sequence of the leases survives a restart.
func TestMigrateV2QueueOrder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.Bucket(bucketQueue).CreateBucket([]byte("T/C/1"))
		if err != nil {
			return err
		}
		for i, p := range []string{`"a"`, `"b"`, `"c"`} {
			v := append(u64Key(uint64(base.Add(time.Duration(i)*time.Second).UnixNano())), p...)
			if err := b.Put(u64Key(uint64(10+i)), v); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put([]byte("version"), u64Key(schemaV2))
	}); err != nil {
		t.Fatal(err)
	}
	f1, _, err := s.TakeLease(ctx, "T/C/1", "a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, nil)
	if v := schemaOf(t, s); v != schemaVersion {
		t.Fatalf("schema %d after migration", v)
	}
	items, err := s.Pending(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || string(items[0].Payload) != `"a"` || items[2].Seq != 12 || items[1].Order != base.Add(time.Second).UnixMicro() {
		t.Fatalf("migrated queue %+v", items)
	}
	if err := storetest.Dequeue(ctx, s, "T/C/1", 11); err != nil {
		t.Fatal(err)
	}
	f2, _, err := s.TakeLease(ctx, "T/C/1", "a", time.Minute)
	if err != nil || f2.Token <= f1.Token {
		t.Fatalf("token %d after restart, before %d: %v", f2.Token, f1.Token, err)
	}
}

// TestMigrateV5Credentials: a version 5 store (without the credentials
// and flows buckets) opens as version 6 with them, and keeps a credential.
func TestMigrateV5Credentials(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bucketCredentials, bucketFlows} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put([]byte("version"), u64Key(schemaV5))
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, nil)
	if v := schemaOf(t, s); v != schemaVersion {
		t.Fatalf("schema %d after migration", v)
	}
	c := storage.Credential{CredentialInfo: storage.CredentialInfo{Team: "T", User: "U", Server: "github"}, Sealed: []byte{1, 2, 3}}
	if err := s.PutCredential(ctx, c); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, nil)
	if got, err := s.Credential(ctx, "T", "U", "github"); err != nil || !bytes.Equal(got.Sealed, c.Sealed) {
		t.Fatalf("credential after reopen: %+v, %v", got, err)
	}
}

// A version 6 store (no person index; owners only in the bot's thread
// state) opens as version 7 with every attached session filed under its
// owner, so the Home tab finds them without reading every session.
func TestMigrateV6PersonIndex(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	var want []string
	for i, meta := range []map[string]string{
		{"bot.thread": `{"owner":"U1","seq":1}`},
		{"bot.owner": "U1"},
		{"bot.thread": `{"owner":"U2"}`},
		nil,
	} {
		sess, err := s.NewSession(ctx, fmt.Sprintf("T/C/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		sess.Meta = meta
		if err := s.SaveSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			want = append([]string{sess.ID}, want...)
		}
	}
	if err := s.db.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bucketPeople, bucketPersonOf} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put([]byte("version"), u64Key(schemaV6))
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, nil)
	if v := schemaOf(t, s); v != schemaVersion {
		t.Fatalf("schema %d after migration", v)
	}
	refs, err := s.PersonSessions(ctx, "U1", 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.ID)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("U1's sessions after the migration = %v, want %v", got, want)
	}
	if refs, _ := s.PersonSessions(ctx, "U2", 0); len(refs) != 1 {
		t.Fatalf("U2's sessions = %v", refs)
	}
}
