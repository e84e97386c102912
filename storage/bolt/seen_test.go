package bolt

import (
	"context"
	"fmt"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"agentbot/storage"
)

// seenEntries counts the marks in the seen bucket.
func seenEntries(t *testing.T, s *Store) int {
	t.Helper()
	n := 0
	err := s.db.View(func(tx *bbolt.Tx) error {
		n = tx.Bucket(bucketSeen).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustSeen(t *testing.T, s *Store, key string, ttl time.Duration, want bool) {
	ctx := context.Background()
	t.Helper()
	got, err := s.Seen(ctx, key, ttl)
	if err != nil {
		t.Fatalf("Seen(%q): %v", key, err)
	}
	if got != want {
		t.Fatalf("Seen(%q) = %v, want %v", key, got, want)
	}
}

func TestSeenTTL(t *testing.T) {
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	ttl := 10 * time.Minute
	mustSeen(t, s, "event:Ev1", ttl, false)
	mustSeen(t, s, "event:Ev1", ttl, true)
	mustSeen(t, s, "msg:C1/1700.1", ttl, false)

	c.Add(9 * time.Minute)
	mustSeen(t, s, "event:Ev1", ttl, true)

	s = reopen(t, s, c)
	mustSeen(t, s, "event:Ev1", ttl, true)
	mustSeen(t, s, "msg:C1/1700.1", ttl, true)

	c.Add(time.Minute) // exactly at expiry
	mustSeen(t, s, "event:Ev1", ttl, false)
	mustSeen(t, s, "event:Ev1", ttl, true) // marked afresh

	// Expiry holds between sweeps too.
	mustSeen(t, s, "short", 10*time.Second, false)
	c.Add(20 * time.Second)
	mustSeen(t, s, "short", 10*time.Second, false)
}

func TestSeenSweeps(t *testing.T) {
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	for i := range 50 {
		mustSeen(t, s, fmt.Sprintf("short-%d", i), time.Minute, false)
	}
	mustSeen(t, s, "long", time.Hour, false)
	if n := seenEntries(t, s); n != 51 {
		t.Fatalf("%d marks, want 51", n)
	}

	// Past the sweep interval and the short marks' expiry, Seen sweeps.
	c.Add(storage.SweepInterval + time.Minute)
	mustSeen(t, s, "sweep", time.Minute, false)
	if n := seenEntries(t, s); n != 2 {
		t.Fatalf("%d marks after sweep, want 2 (long, sweep)", n)
	}

	// Seen sweeps by itself once the sweep interval has passed.
	for i := range 20 {
		mustSeen(t, s, fmt.Sprintf("again-%d", i), time.Minute, false)
	}
	c.Add(storage.SweepInterval + time.Minute)
	mustSeen(t, s, "trigger", time.Minute, false)
	if n := seenEntries(t, s); n != 2 {
		t.Fatalf("%d marks after Seen's own sweep, want 2 (long, trigger)", n)
	}
	mustSeen(t, s, "long", time.Hour, true)
}

func TestSeenBadInput(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	if _, err := s.Seen(ctx, "", time.Minute); err == nil {
		t.Error("Seen(\"\"): want error")
	}
	for _, ttl := range []time.Duration{0, -time.Second} {
		if _, err := s.Seen(ctx, "k", ttl); err == nil {
			t.Errorf("Seen ttl %s: want error", ttl)
		}
	}
	if n := seenEntries(t, s); n != 0 {
		t.Fatalf("bad calls left %d marks", n)
	}
}
