package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

func TestSessionRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	sess, err := s.NewSession(ctx, "T1/C1/1700000000.000100")
	if err != nil {
		t.Fatal(err)
	}
	if !sess.Created.Equal(c.Now()) || !sess.Updated.Equal(c.Now()) {
		t.Fatalf("NewSession times = %v / %v, want %v", sess.Created, sess.Updated, c.Now())
	}
	c.Add(time.Minute)
	sess.AgentID = "pm"
	sess.Agent = testAgent()
	sess.Date = "2025-03-01"
	sess.Vars = map[string]string{"project-root": "/project", "output_folder": "/outputs"}
	sess.Messages = testMessages()
	sess.Elided = 2
	sess.Outputs = []transcript.Output{{Path: "prd.md", Size: 1234, Version: 2, Time: c.Now()}}
	sess.Usage = transcript.Usage{Prompt: 1000, Cached: 800, Completion: 200, Calls: 3}
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if !sess.Updated.Equal(c.Now()) {
		t.Fatalf("SaveSession set Updated = %v, want %v", sess.Updated, c.Now())
	}

	s = reopen(t, s, c)
	byKey, err := storage.Session(ctx, s, sess.Key)
	if err != nil {
		t.Fatal(err)
	}
	byID, err := s.SessionByID(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]*transcript.Session{"Session": byKey, "SessionByID": byID} {
		if !reflect.DeepEqual(got, sess) {
			g, _ := json.MarshalIndent(got, "", " ")
			w, _ := json.MarshalIndent(sess, "", " ")
			t.Fatalf("%s round trip differs:\ngot  %s\nwant %s", name, g, w)
		}
	}
	tc := byKey.Messages[2].ToolCalls
	if len(tc) != 2 || tc[1].Function.Name != "read_file" || byKey.Messages[4].ToolCallID != "call_2" {
		t.Fatalf("tool calls lost: %+v", byKey.Messages[2:5])
	}
	if byKey.Agent == nil || *byKey.Agent != *testAgent() {
		t.Fatalf("agent snapshot lost: %+v", byKey.Agent)
	}
}

func TestSaveSessionAppendsOnly(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	sess, err := s.NewSession(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	sess.Messages = []transcript.Message{{Role: "system", Content: "sys"}}
	var maxWrites int64
	for i := 1; i <= 100; i++ {
		sess.Messages = append(sess.Messages, textMessage(i, 2000))
		before := pageWrites(s)
		if err := s.SaveSession(ctx, sess); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
		maxWrites = max(maxWrites, pageWrites(s)-before)
		err := s.db.View(func(tx *bbolt.Tx) error {
			if n := messageCount(tx.Bucket(bucketSessions).Bucket([]byte(sess.ID)).Bucket(bucketMessages)); n != uint64(i+1) {
				return fmt.Errorf("after save %d: %d messages stored, want %d", i, n, i+1)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Rewriting a 200 KB transcript would take 50+ pages per save; an
	// append touches a handful.
	if maxWrites > 20 {
		t.Fatalf("a save wrote up to %d pages; appending one message should write a few", maxWrites)
	}

	// Stored messages are never rewritten: a change to an old message in
	// memory does not reach the store.
	sess.Messages[1].Content = "changed"
	sess.Messages = append(sess.Messages, textMessage(101, 10))
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	got, err := s.SessionByID(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 102 {
		t.Fatalf("stored %d messages, want 102", len(got.Messages))
	}
	for i, m := range got.Messages[1:] {
		if !strings.HasPrefix(m.Content, fmt.Sprintf("message %d ", i+1)) {
			t.Fatalf("message %d = %.20q: out of order or rewritten", i+1, m.Content)
		}
	}
}

// pageWrites is the number of pages the store's committed transactions wrote.
func pageWrites(s *Store) int64 {
	st := s.db.Stats()
	return st.TxStats.GetWrite()
}

func TestSaveSessionRejectsShorterTranscript(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	sess, err := s.NewSession(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	sess.Messages = testMessages()
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	stale := *sess
	stale.Messages = sess.Messages[:2]
	stale.AgentID = "analyst"
	err = s.SaveSession(ctx, &stale)
	if err == nil || !strings.Contains(err.Error(), "only grow") {
		t.Fatalf("saving a shorter transcript: got %v, want an error", err)
	}
	got, err := s.SessionByID(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != len(sess.Messages) || got.AgentID != "" {
		t.Fatalf("rejected save changed the store: %d messages, agent %q", len(got.Messages), got.AgentID)
	}
}

func TestSaveSessionBadInput(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	sess, err := s.NewSession(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSession(ctx, nil); err == nil {
		t.Error("SaveSession(nil): want error")
	}
	for _, id := range []string{"", "../etc", "a/b", "UP"} {
		if err := s.SaveSession(ctx, &transcript.Session{ID: id, Key: "k"}); err == nil {
			t.Errorf("SaveSession(id %q): want error", id)
		}
	}
	wantErrIs(t, "SaveSession of an unknown id", s.SaveSession(ctx, &transcript.Session{ID: "zzzzzzzz", Key: "k"}), storage.ErrNotFound)
	other := *sess
	other.Key = "another"
	if err := s.SaveSession(ctx, &other); err == nil {
		t.Error("SaveSession with a key that is not the session's: want error")
	}
	if got, err := s.SessionByID(ctx, sess.ID); err != nil || len(got.Messages) != 0 {
		t.Fatalf("failed saves changed the store: %v, %v", got, err)
	}
}

func TestNewSessionAndLookup(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	sess, err := s.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.NewSession(ctx, "T/C/1")
	wantErrIs(t, "NewSession of a taken key", err, storage.ErrExists)
	if got, err := storage.Session(ctx, s, "T/C/1"); err != nil || got.ID != sess.ID {
		t.Fatalf("Session after storage.ErrExists = %v, %v; want the original", got, err)
	}
	_, err = storage.Session(ctx, s, "T/C/2")
	wantErrIs(t, "Session of an unknown key", err, storage.ErrNotFound)
	_, err = s.SessionByID(ctx, "aaaaaaaa")
	wantErrIs(t, "SessionByID of an unknown id", err, storage.ErrNotFound)
	for _, key := range []string{"", strings.Repeat("k", storage.MaxKeyLen+1)} {
		if _, err := s.NewSession(ctx, key); err == nil {
			t.Errorf("NewSession(%.10q...): want error", key)
		}
		if _, err := storage.Session(ctx, s, key); err == nil {
			t.Errorf("Session(%.10q...): want error", key)
		}
	}
	for _, id := range []string{"", "..", "a/b", "A"} {
		if _, err := s.SessionByID(ctx, id); err == nil {
			t.Errorf("SessionByID(%q): want error", id)
		}
	}
}

func TestSessionIDsFilesystemSafe(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	safe := regexp.MustCompile(`^[a-z2-7]{13}$`)
	ids := map[string]bool{}
	for i := range 200 {
		sess, err := s.NewSession(ctx, fmt.Sprintf("T/C/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if !safe.MatchString(sess.ID) || ids[sess.ID] {
			t.Fatalf("id %q: not [a-z2-7]{13} or duplicate", sess.ID)
		}
		ids[sess.ID] = true
		out, err := s.OutputDir(sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(out) != filepath.Join(dir, "outputs") {
			t.Fatalf("OutputDir(%s) = %s escapes outputs/", sess.ID, out)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	var firstSeen sync.Map
	for g := range 8 {
		wg.Go(func() {
			sess, err := s.NewSession(ctx, fmt.Sprintf("T/C/%d", g))
			if err != nil {
				errs <- err
				return
			}
			for i := range 10 {
				sess.Messages = append(sess.Messages, textMessage(i, 50))
				if err := s.SaveSession(ctx, sess); err != nil {
					errs <- err
					return
				}
				seen, err := s.Seen(ctx, "event-1", time.Hour)
				if err != nil {
					errs <- err
					return
				}
				if !seen {
					firstSeen.Store(g*100+i, true)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := 0
	firstSeen.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("Seen reported a new key %d times under concurrency, want 1", n)
	}
	list, err := s.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 8 {
		t.Fatalf("%d sessions, want 8", len(list))
	}
	for _, info := range list {
		if info.Messages != 10 {
			t.Fatalf("session %s has %d messages, want 10", info.ID, info.Messages)
		}
	}
}

// BenchmarkSaveSessionAppend appends 2 messages to a session of 100 (and
// growing) messages per op.
func BenchmarkSaveSessionAppend(b *testing.B) {
	ctx := context.Background()
	s := openAt(b, b.TempDir(), nil)
	sess, err := s.NewSession(ctx, "T/C/1")
	if err != nil {
		b.Fatal(err)
	}
	sess.Agent = testAgent()
	sess.Messages = append(sess.Messages, transcript.Message{Role: "system", Content: strings.Repeat("p", 8000)})
	for i := range 99 {
		sess.Messages = append(sess.Messages, textMessage(i, 1000))
	}
	if err := s.SaveSession(ctx, sess); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sess.Messages = append(sess.Messages, textMessage(i, 1000), textMessage(i, 1000))
		if err := s.SaveSession(ctx, sess); err != nil {
			b.Fatal(err)
		}
	}
}
