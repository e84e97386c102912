package bolt

import (
	"context"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

func TestOutputs(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	sess, err := s.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	put := func(path string, v int, data string) {
		t.Helper()
		if err := s.PutOutput(ctx, sess.ID, transcript.Output{Path: path, Version: v, Size: int64(len(data)), Time: c.Now()}, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path string, v int) (string, error) {
		b, err := s.OutputData(ctx, sess.ID, path, v)
		return string(b), err
	}
	put("prd.md", 1, "one")
	put("prd.md", 2, "two")
	put("prd.md/x", 7, "nested") // a path that extends another sorts apart
	put("brief.md", 1, "brief")
	put("prd.md", 2, "two again") // same version replaces
	for _, c := range []struct {
		path string
		v    int
		want string
	}{{"prd.md", 1, "one"}, {"prd.md", 2, "two again"}, {"prd.md", 0, "two again"}, {"prd.md/x", 0, "nested"}, {"brief.md", 0, "brief"}} {
		if got, err := get(c.path, c.v); err != nil || got != c.want {
			t.Errorf("OutputData(%s, %d) = %q, %v; want %q", c.path, c.v, got, err, c.want)
		}
	}
	for _, c := range []struct {
		path string
		v    int
	}{{"prd.md", 3}, {"missing.md", 0}, {"prd.m", 0}, {"prd.md", -1}} {
		if _, err := get(c.path, c.v); err == nil {
			t.Errorf("OutputData(%s, %d): want storage.ErrNotFound", c.path, c.v)
		} else {
			wantErrIs(t, "OutputData of a missing version", err, storage.ErrNotFound)
		}
	}
	wantErrIs(t, "PutOutput to an unknown session", s.PutOutput(ctx, "zzzzzzzz", transcript.Output{Path: "a.md", Version: 1}, nil), storage.ErrNotFound)
	for _, o := range []transcript.Output{{Path: "", Version: 1}, {Path: "a\x00b", Version: 1}, {Path: "a.md", Version: 0}} {
		if err := s.PutOutput(ctx, sess.ID, o, []byte("x")); err == nil {
			t.Errorf("PutOutput(%+v): want error", o)
		}
	}
	if _, err := s.OutputData(ctx, "../x", "a.md", 0); err == nil {
		t.Error("OutputData with a bad session id: want error")
	}

	// Documents survive a reopen, and go with their session.
	s = reopen(t, s, c)
	if got, err := get("brief.md", 1); err != nil || got != "brief" {
		t.Fatalf("after reopen: %q, %v", got, err)
	}
	if err := s.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := get("brief.md", 1); err == nil {
		t.Fatal("documents outlived DeleteSession")
	}

	// Prune deletes them too.
	old, err := s.NewSession(ctx, "T/C/2")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutOutput(ctx, old.ID, transcript.Output{Path: "a.md", Version: 1}, []byte("a")); err != nil {
		t.Fatal(err)
	}
	c.Add(48 * time.Hour)
	ids, err := s.Prune(ctx, c.Now().Add(-time.Hour))
	if err != nil || len(ids) != 1 || ids[0] != old.ID {
		t.Fatalf("Prune = %v, %v", ids, err)
	}
	if _, err := s.OutputData(ctx, old.ID, "a.md", 0); err == nil {
		t.Fatal("documents outlived Prune")
	}
}
