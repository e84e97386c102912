package bolt

import (
	"context"
	"errors"
	"testing"
	"time"

	"agentbot/storage"
	"agentbot/storage/storetest"
)

func TestFindDetachAndNext(t *testing.T) {
	ctx := context.Background()
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := st.FindSession(ctx, "T/C/1"); s != nil || err != nil {
		t.Fatalf("absent: %v %v", s, err)
	}
	if ok, err := storage.HasSession(ctx, st, "T/C/1"); ok || err != nil {
		t.Fatalf("has absent: %v %v", ok, err)
	}
	old, err := st.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := storage.HasSession(ctx, st, "T/C/1"); !ok || err != nil {
		t.Fatalf("has: %v %v", ok, err)
	}
	if s, err := st.FindSession(ctx, "T/C/1"); err != nil || s.ID != old.ID {
		t.Fatalf("find: %v %v", s, err)
	}
	if err := st.DetachSession(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	if s, _ := st.FindSession(ctx, "T/C/1"); s != nil {
		t.Fatal("detached session still found by key")
	}
	if _, err := st.SessionByID(ctx, old.ID); err != nil {
		t.Fatalf("detached session data lost: %v", err)
	}
	fresh, err := st.NewSession(ctx, "T/C/1")
	if err != nil || fresh.ID == old.ID {
		t.Fatalf("new session after detach: %v %v", fresh, err)
	}
	if err := st.DetachSession(ctx, "nosuchid"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("detach unknown: %v", err)
	}

	if _, _, ok, err := storage.Next(ctx, st, "T/C/1"); ok || err != nil {
		t.Fatalf("empty queue: %v %v", ok, err)
	}
	a, _ := storetest.Enqueue(ctx, st, "T/C/1", []byte(`{"n":1}`))
	storetest.Enqueue(ctx, st, "T/C/1", []byte(`{"n":2}`))
	seq, p, ok, err := storage.Next(ctx, st, "T/C/1")
	if !ok || err != nil || seq != a || string(p) != `{"n":1}` {
		t.Fatalf("next = %d %s %v %v", seq, p, ok, err)
	}
}

// Admit dedupes and enqueues in one commit: a message seen under any of its
// keys is a duplicate and is not queued again, across a reopen too.
func TestAdmit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	dup, seq, err := storetest.Admit(ctx, st, []string{"event/E1", "msg/C/1.0"}, time.Minute, "T/C/1.0", []byte(`{"n":1}`))
	if err != nil || dup || seq == 0 {
		t.Fatalf("first admit = %v %d %v", dup, seq, err)
	}
	// The same message under its other event (app_mention vs message).
	if dup, _, err := storetest.Admit(ctx, st, []string{"event/E2", "msg/C/1.0"}, time.Minute, "T/C/1.0", []byte(`{"n":1}`)); err != nil || !dup {
		t.Fatalf("second admit = %v %v", dup, err)
	}
	st.Close()
	st, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if dup, _, _ := storetest.Admit(ctx, st, []string{"event/E1"}, time.Minute, "T/C/1.0", []byte(`{"n":1}`)); !dup {
		t.Fatal("a retry after reopen was not recognised")
	}
	if items, _ := st.Pending(ctx, "T/C/1.0"); len(items) != 1 {
		t.Fatalf("queued %d items, want 1", len(items))
	}
	// Without keys it just enqueues (button clicks).
	if dup, seq2, err := storetest.Admit(ctx, st, nil, 0, "T/C/1.0", []byte(`{"n":2}`)); dup || err != nil || seq2 <= seq {
		t.Fatalf("keyless admit = %v %d %v", dup, seq2, err)
	}
	if _, _, err := storetest.Admit(ctx, st, []string{"k"}, time.Minute, "T/C/1.0", []byte("not json")); err == nil {
		t.Fatal("bad payload accepted")
	}
	if _, _, err := storetest.Admit(ctx, st, []string{""}, time.Minute, "T/C/1.0", []byte(`{}`)); err == nil {
		t.Fatal("empty key accepted")
	}
}
