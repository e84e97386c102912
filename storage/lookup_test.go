package storage

import (
	"errors"
	"testing"
)

func TestFindDetachAndNext(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if s, err := st.FindSession("T/C/1"); s != nil || err != nil {
		t.Fatalf("absent: %v %v", s, err)
	}
	old, err := st.NewSession("T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	if s, err := st.FindSession("T/C/1"); err != nil || s.ID != old.ID {
		t.Fatalf("find: %v %v", s, err)
	}
	if err := st.DetachSession(old.ID); err != nil {
		t.Fatal(err)
	}
	if s, _ := st.FindSession("T/C/1"); s != nil {
		t.Fatal("detached session still found by key")
	}
	if _, err := st.SessionByID(old.ID); err != nil {
		t.Fatalf("detached session data lost: %v", err)
	}
	fresh, err := st.NewSession("T/C/1")
	if err != nil || fresh.ID == old.ID {
		t.Fatalf("new session after detach: %v %v", fresh, err)
	}
	if err := st.DetachSession("nosuchid"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("detach unknown: %v", err)
	}

	if _, _, ok, err := st.Next("T/C/1"); ok || err != nil {
		t.Fatalf("empty queue: %v %v", ok, err)
	}
	a, _ := st.Enqueue("T/C/1", []byte(`{"n":1}`))
	st.Enqueue("T/C/1", []byte(`{"n":2}`))
	seq, p, ok, err := st.Next("T/C/1")
	if !ok || err != nil || seq != a || string(p) != `{"n":1}` {
		t.Fatalf("next = %d %s %v %v", seq, p, ok, err)
	}
}
