package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/storage"
	"agentbot/storage/storetest"
)

// A message journaled but never committed (the process died after the
// ack) is admitted at the next Open, exactly once; the journal is emptied
// once everything in it is committed; a torn last line is dropped.
func TestJournalReplay(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a := <-storetest.Done(st.Admit(ctx, 0, []string{"event/E1"}, time.Hour, "T/C/1", []byte(`{"text":"committed"}`))); a.Err != nil || a.Dup {
		t.Fatalf("admit: %+v", a)
	}
	st.Close()
	if fi, _ := os.Stat(filepath.Join(dir, JournalName)); fi == nil || fi.Size() != 0 {
		t.Fatalf("the journal is not empty after the commit: %+v", fi)
	}
	// A crash after the journal write: E1 again (committed before: a
	// duplicate), E2 (never committed), and a torn line.
	j := `{"keys":["event/E1"],"ttl":3600000000000,"key":"T/C/1","payload":{"text":"committed"}}` + "\n" +
		`{"keys":["event/E2"],"ttl":3600000000000,"key":"T/C/2","payload":{"text":"lost?"}}` + "\n" +
		`{"keys":["event/E3"],"ttl":36`
	if err := os.WriteFile(filepath.Join(dir, JournalName), []byte(j), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p1, _ := st.Pending(ctx, "T/C/1")
	p2, _ := st.Pending(ctx, "T/C/2")
	if len(p1) != 1 || len(p2) != 1 || string(p2[0].Payload) != `{"text":"lost?"}` {
		t.Fatalf("after replay: %d in T/C/1, %d in T/C/2 (%+v)", len(p1), len(p2), p2)
	}
	if fi, _ := os.Stat(filepath.Join(dir, JournalName)); fi.Size() != 0 {
		t.Fatal("the journal was not emptied after the replay")
	}
	if dup, _, _ := storetest.Admit(ctx, st, []string{"event/E2"}, time.Hour, "T/C/2", []byte(`{}`)); !dup {
		t.Fatal("the replayed message's dedupe key was not marked")
	}
}

// TestJournalKeepsFailedCommits: while commits fail, admissions are
// journaled (and may be acked) but not committed; the journal keeps them,
// they commit once the store recovers, in order, and a crash in between
// replays them.
func TestJournalKeepsFailedCommits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var failing atomic.Bool
	failing.Store(true)
	st.commitFault = func() error {
		if failing.Load() {
			return errors.New("disk full")
		}
		return nil
	}
	var dones []<-chan storage.Admission
	for i := range 5 {
		j, d := st.Admit(ctx, 0, []string{fmt.Sprint("E", i)}, time.Hour, "T/C/1", []byte(fmt.Sprint(i)))
		if err := <-j; err != nil {
			t.Fatalf("journal %d: %v", i, err)
		}
		dones = append(dones, d)
	}
	time.Sleep(3 * retryEvery) // several failed rounds
	for i, d := range dones {
		select {
		case a := <-d:
			t.Fatalf("admission %d reported %+v while commits fail", i, a)
		default:
		}
	}
	if entries, _ := readJournal(st.journal); len(entries) != 5 {
		t.Fatalf("journal holds %d entries after failed commits, want 5", len(entries))
	}
	failing.Store(false)
	for i, d := range dones {
		if a := <-d; a.Err != nil || a.Dup {
			t.Fatalf("admission %d after recovery: %+v", i, a)
		}
	}
	items, _ := st.Pending(ctx, "T/C/1")
	if len(items) != 5 || string(items[0].Payload) != "0" || string(items[4].Payload) != "4" {
		t.Fatalf("queued %+v", items)
	}
	if fi, _ := os.Stat(filepath.Join(dir, JournalName)); fi.Size() != 0 {
		t.Fatal("the journal was not emptied after the late commit")
	}

	// Fails again, then the process goes away: the next Open replays.
	failing.Store(true)
	j, _ := st.Admit(ctx, 0, []string{"E9"}, time.Hour, "T/C/2", []byte(`9`))
	if err := <-j; err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if items, _ := st.Pending(ctx, "T/C/2"); len(items) != 1 {
		t.Fatalf("the uncommitted admission was not replayed: %+v", items)
	}
}

// TestJournalWriteFailureNotJournaled: an admission whose journal write
// fails is reported as not journaled (never to be acked) and is not
// committed; the journal's earlier entries stay whole, and admissions
// after the fault are journaled again.
func TestJournalWriteFailureNotJournaled(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	good := st.journal
	ro, err := os.Open(filepath.Join(dir, JournalName)) // read-only: writes fail
	if err != nil {
		t.Fatal(err)
	}
	st.jmu.Lock()
	st.journal = ro
	st.jmu.Unlock()
	j, d := st.Admit(ctx, 0, []string{"E1"}, time.Hour, "T/C/1", []byte(`1`))
	if err := <-j; err == nil {
		t.Fatal("a failed journal write was reported journaled")
	}
	if a := <-d; a.Err == nil {
		t.Fatalf("a failed journal write was admitted: %+v", a)
	}
	st.jmu.Lock()
	st.journal = good
	st.jmu.Unlock()
	ro.Close()
	if items, _ := st.Pending(ctx, "T/C/1"); len(items) != 0 {
		t.Fatalf("queued %+v", items)
	}
	// Slack redelivers: admitted now, not a dup.
	if dup, _, err := storetest.Admit(ctx, st, []string{"E1"}, time.Hour, "T/C/1", []byte(`1`)); err != nil || dup {
		t.Fatalf("redelivery: %v %v", dup, err)
	}
}
