package bolt

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/storetest"
)

// crashEnv names the data directory the crash child writes to.
const crashEnv = "AGENTBOT_STORAGE_CRASH_DIR"

// TestMain doubles as the crash child: with crashEnv set, the test binary
// saves a session twice and exits without closing the store.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	os.Exit(m.Run())
}

func crashChild(dir string) int {
	ctx := context.Background()
	s, err := Open(dir)
	if err != nil {
		return 3
	}
	sess, err := s.NewSession(ctx, "T1/C1/100.1")
	if err != nil {
		return 4
	}
	sess.AgentID = "pm"
	sess.Messages = testMessages()[:3]
	if err := s.SaveSession(ctx, sess); err != nil {
		return 5
	}
	sess.Messages = testMessages()
	if err := s.SaveSession(ctx, sess); err != nil {
		return 6
	}
	if _, err := storetest.Enqueue(ctx, s, sess.Key, []byte(`{"text":"next"}`)); err != nil {
		return 7
	}
	return 1 // killed mid-turn: no Close
}

func TestCrashKeepsLastSave(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("crash child: got %v, want exit status 1", err)
	}
	s := openAt(t, dir, nil)
	got, err := storage.Session(ctx, s, "T1/C1/100.1")
	if err != nil {
		t.Fatalf("Session after crash: %v", err)
	}
	if len(got.Messages) != len(testMessages()) || got.AgentID != "pm" {
		t.Fatalf("after crash: %d messages, agent %q; want %d, pm", len(got.Messages), got.AgentID, len(testMessages()))
	}
	q, err := s.Pending(ctx, "T1/C1/100.1")
	if err != nil || len(q) != 1 || string(q[0].Payload) != `{"text":"next"}` {
		t.Fatalf("Pending after crash = %v, %v; want the one queued message", q, err)
	}
}

func TestOpenLockedFailsFast(t *testing.T) {
	dir := t.TempDir()
	first := openAt(t, dir, nil)

	done := make(chan error, 1)
	go func() {
		s, err := Open(dir)
		if err == nil {
			_ = s.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		wantErrIs(t, "second Open", err, ErrLocked)
		want := "data directory " + dir + " is in use by another agentbot process (agentbot.db is locked)"
		if err.Error() != want {
			t.Fatalf("second Open error = %q, want %q", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second Open on a locked data directory hung")
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	_ = again.Close()
}

func TestOpenBadDir(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Error("Open(\"\"): want error")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(file); err == nil {
		t.Error("Open(regular file): want error")
	}
	garbage := t.TempDir()
	if err := os.WriteFile(filepath.Join(garbage, DBName), []byte("not a bolt database, just some bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(garbage); err == nil {
		t.Error("Open(dir with a corrupt agentbot.db): want error")
	}
}

func TestOpenCreatesDirAndReopens(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "data")
	s := openAt(t, dir, nil)
	if _, err := os.Stat(filepath.Join(dir, DBName)); err != nil {
		t.Fatalf("database file: %v", err)
	}
	sess, err := s.NewSession(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	sess.Messages = []transcript.Message{{Role: "system", Content: "a"}}
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	sess.Messages = append(sess.Messages, transcript.Message{Role: "user", Content: "b"})
	if err := s.SaveSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, nil)
	got, err := s.SessionByID(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 2 || got.Messages[1].Content != "b" {
		t.Fatalf("after reopen: %+v", got.Messages)
	}
}

func TestSessionDirs(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	out, err := s.OutputDir("abc123")
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.InputDir("abc123")
	if err != nil {
		t.Fatal(err)
	}
	if out != filepath.Join(dir, "outputs", "abc123") || in != filepath.Join(dir, "inputs", "abc123") {
		t.Fatalf("OutputDir = %s, InputDir = %s", out, in)
	}
	for _, p := range []string{out, in} {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			t.Fatalf("%s not created: %v", p, err)
		}
	}
	for _, bad := range []string{"", "..", "../x", "a/b", `a\b`, "A", "a.b", "a\x00b", string(make([]byte, 65))} {
		if _, err := s.OutputDir(bad); err == nil {
			t.Errorf("OutputDir(%q): want error", bad)
		}
		if _, err := s.InputDir(bad); err == nil {
			t.Errorf("InputDir(%q): want error", bad)
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	dir := t.TempDir()
	s := openAt(t, dir, nil)
	err := s.db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketMeta).Put([]byte("version"), u64Key(schemaVersion+1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		if err == nil {
			_ = s.Close()
		}
		t.Fatalf("Open of a newer schema: got %v, want an error saying it is newer", err)
	}
}
