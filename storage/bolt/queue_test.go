package bolt

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"agentbot/storage"
	"agentbot/storage/storetest"
)

// payloads returns the queued payloads as strings.
func payloads(q []storage.Queued) []string {
	var out []string
	for _, item := range q {
		out = append(out, string(item.Payload))
	}
	return out
}

func mustPending(t *testing.T, s *Store, key string, want ...string) []storage.Queued {
	ctx := context.Background()
	t.Helper()
	q, err := s.Pending(ctx, key)
	if err != nil {
		t.Fatalf("Pending(%s): %v", key, err)
	}
	if got := payloads(q); !slices.Equal(got, want) {
		t.Fatalf("Pending(%s) = %q, want %q", key, got, want)
	}
	return q
}

func mustKeys(t *testing.T, s *Store, want ...string) {
	ctx := context.Background()
	t.Helper()
	keys, err := s.PendingKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(keys, want) {
		t.Fatalf("PendingKeys = %q, want %q", keys, want)
	}
}

func TestQueue(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	const a, b = "T/C/1", "T/C/2"
	mustPending(t, s, a)
	mustKeys(t, s)

	var seqs []uint64
	for i, key := range []string{a, a, b, a} {
		seq, err := storetest.Enqueue(ctx, s, key, fmt.Appendf(nil, `{"text":"m%d"}`, i))
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) > 0 && seq <= seqs[len(seqs)-1] {
			t.Fatalf("seq %d after %d: not increasing", seq, seqs[len(seqs)-1])
		}
		seqs = append(seqs, seq)
		c.Add(time.Second)
	}
	q := mustPending(t, s, a, `{"text":"m0"}`, `{"text":"m1"}`, `{"text":"m3"}`)
	start := newClock().Now()
	if q[0].Seq != seqs[0] || q[2].Seq != seqs[3] || !q[0].Enqueued.Equal(start) || !q[2].Enqueued.Equal(start.Add(3*time.Second)) {
		t.Fatalf("queued items = %+v", q)
	}
	mustPending(t, s, b, `{"text":"m2"}`)
	mustKeys(t, s, a, b)

	if err := storetest.Dequeue(ctx, s, a, seqs[1]); err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, "Dequeue twice", storetest.Dequeue(ctx, s, a, seqs[1]), storage.ErrNotFound)
	wantErrIs(t, "Dequeue from the wrong key", storetest.Dequeue(ctx, s, b, seqs[0]), storage.ErrNotFound)
	wantErrIs(t, "Dequeue from an empty key", storetest.Dequeue(ctx, s, "T/C/none", 1), storage.ErrNotFound)

	s = reopen(t, s, c)
	mustPending(t, s, a, `{"text":"m0"}`, `{"text":"m3"}`)
	mustKeys(t, s, a, b)

	if err := storetest.Dequeue(ctx, s, b, seqs[2]); err != nil {
		t.Fatal(err)
	}
	mustKeys(t, s, a)
	mustPending(t, s, b)

	seq, err := storetest.Enqueue(ctx, s, b, []byte(`{"text":"m4"}`))
	if err != nil {
		t.Fatal(err)
	}
	if seq <= seqs[3] {
		t.Fatalf("seq %d reused after the key's queue emptied (last was %d)", seq, seqs[3])
	}
}

func TestQueueBadInput(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	for _, p := range []string{"", "not json", `{"a":`} {
		if _, err := storetest.Enqueue(ctx, s, "T/C/1", []byte(p)); err == nil {
			t.Errorf("Enqueue(%q): want error", p)
		}
	}
	if _, err := storetest.Enqueue(ctx, s, "", []byte(`{}`)); err == nil {
		t.Error("Enqueue with an empty key: want error")
	}
	if _, err := s.Pending(ctx, ""); err == nil {
		t.Error("Pending(\"\"): want error")
	}
	if _, _, _, err := storage.Next(ctx, s, ""); err == nil {
		t.Error("Next(\"\"): want error")
	}
	if err := storetest.Dequeue(ctx, s, "", 1); err == nil {
		t.Error("Dequeue(\"\"): want error")
	}
	mustKeys(t, s)
}
