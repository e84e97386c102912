package bolt

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A message journaled but never committed (the process died after the
// ack) is admitted at the next Open, exactly once; the journal is emptied
// once everything in it is committed; a torn last line is dropped.
func TestJournalReplay(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a := <-st.AdmitAsync([]string{"event/E1"}, time.Hour, "T/C/1", []byte(`{"text":"committed"}`)); a.Err != nil || a.Dup {
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
	p1, _ := st.Pending("T/C/1")
	p2, _ := st.Pending("T/C/2")
	if len(p1) != 1 || len(p2) != 1 || string(p2[0].Payload) != `{"text":"lost?"}` {
		t.Fatalf("after replay: %d in T/C/1, %d in T/C/2 (%+v)", len(p1), len(p2), p2)
	}
	if fi, _ := os.Stat(filepath.Join(dir, JournalName)); fi.Size() != 0 {
		t.Fatal("the journal was not emptied after the replay")
	}
	if dup, _, _ := st.Admit([]string{"event/E2"}, time.Hour, "T/C/2", []byte(`{}`)); !dup {
		t.Fatal("the replayed message's dedupe key was not marked")
	}
}
