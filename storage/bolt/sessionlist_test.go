package bolt

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// withFiles creates a file in the session's outputs and inputs folders and
// returns the two folders.
func withFiles(t *testing.T, s *Store, id string) []string {
	t.Helper()
	out, err := s.OutputDir(id)
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.InputDir(id)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{out, in} {
		if err := os.WriteFile(filepath.Join(d, "doc.md"), []byte("# doc"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{out, in}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestListSessions(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	older, err := s.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	newer, err := s.NewSession(ctx, "T/C/2")
	if err != nil {
		t.Fatal(err)
	}
	newer.AgentID = "pm"
	newer.Messages = testMessages()
	newer.Outputs = []transcript.Output{{Path: "a.md"}, {Path: "b.md"}}
	newer.Usage = transcript.Usage{Prompt: 10, Completion: 5, Calls: 2}
	c.Add(time.Hour)
	if err := s.SaveSession(ctx, newer); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.SessionInfo{
		{ID: newer.ID, Key: "T/C/2", AgentID: "pm", Messages: len(testMessages()), Outputs: 2, Usage: newer.Usage, Created: newer.Created, Updated: newer.Updated},
		{ID: older.ID, Key: "T/C/1", Created: older.Created, Updated: older.Updated},
	}
	if !slices.EqualFunc(list, want, func(a, b storage.SessionInfo) bool {
		return a.ID == b.ID && a.Key == b.Key && a.AgentID == b.AgentID && a.Messages == b.Messages &&
			a.Outputs == b.Outputs && a.Usage == b.Usage && a.Created.Equal(b.Created) && a.Updated.Equal(b.Updated)
	}) {
		t.Fatalf("ListSessions =\n%+v\nwant\n%+v", list, want)
	}
}

func TestDeleteSession(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	gone, err := s.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	gone.Messages = testMessages()
	if err := s.SaveSession(ctx, gone); err != nil {
		t.Fatal(err)
	}
	kept, err := s.NewSession(ctx, "T/C/2")
	if err != nil {
		t.Fatal(err)
	}
	goneDirs := withFiles(t, s, gone.ID)
	keptDirs := withFiles(t, s, kept.ID)

	if err := s.DeleteSession(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	for _, d := range goneDirs {
		if exists(d) {
			t.Errorf("%s still exists after DeleteSession", d)
		}
	}
	for _, d := range keptDirs {
		if !exists(filepath.Join(d, "doc.md")) {
			t.Errorf("%s of the other session was removed", d)
		}
	}
	_, err = s.SessionByID(ctx, gone.ID)
	wantErrIs(t, "SessionByID after delete", err, storage.ErrNotFound)
	_, err = storage.Session(ctx, s, "T/C/1")
	wantErrIs(t, "Session after delete", err, storage.ErrNotFound)
	wantErrIs(t, "second DeleteSession", s.DeleteSession(ctx, gone.ID), storage.ErrNotFound)
	if _, err := s.SessionByID(ctx, kept.ID); err != nil {
		t.Fatalf("other session: %v", err)
	}

	again, err := s.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatalf("NewSession on a freed key: %v", err)
	}
	if again.ID == gone.ID {
		t.Fatal("a new session reused the deleted id")
	}
	for _, bad := range []string{"", "../outputs", "a/b"} {
		if err := s.DeleteSession(ctx, bad); err == nil {
			t.Errorf("DeleteSession(%q): want error", bad)
		}
	}
}

func TestPrune(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	old, err := s.NewSession(ctx, "T/C/old")
	if err != nil {
		t.Fatal(err)
	}
	stale, err := s.NewSession(ctx, "T/C/stale")
	if err != nil {
		t.Fatal(err)
	}
	active, err := s.NewSession(ctx, "T/C/active")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(2 * time.Hour)
	active.Messages = []transcript.Message{{Role: "system", Content: "s"}}
	if err := s.SaveSession(ctx, active); err != nil { // Updated moves on
		t.Fatal(err)
	}
	oldDirs := withFiles(t, s, old.ID)
	activeDirs := withFiles(t, s, active.ID)

	ids, err := s.Prune(ctx, c.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	want := []string{old.ID, stale.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("Prune = %v, want %v", ids, want)
	}
	for _, d := range oldDirs {
		if exists(d) {
			t.Errorf("%s survived Prune", d)
		}
	}
	for _, d := range activeDirs {
		if !exists(filepath.Join(d, "doc.md")) {
			t.Errorf("%s of the active session was removed", d)
		}
	}
	list, err := s.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != active.ID {
		t.Fatalf("after Prune: %+v, want only the active session", list)
	}
	_, err = storage.Session(ctx, s, "T/C/old")
	wantErrIs(t, "Session of a pruned key", err, storage.ErrNotFound)

	ids, err = s.Prune(ctx, c.Now().Add(-time.Hour))
	if err != nil || len(ids) != 0 {
		t.Fatalf("second Prune = %v, %v; want nothing", ids, err)
	}
}
