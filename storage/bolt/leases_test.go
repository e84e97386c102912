package bolt

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"agentbot/storage/storetest"
)

func mustLease(t *testing.T, s *Store, key, holder string, ttl time.Duration, want bool) {
	ctx := context.Background()
	t.Helper()
	got, err := storetest.Lease(ctx, s, key, holder, ttl)
	if err != nil {
		t.Fatalf("Lease(%s, %s): %v", key, holder, err)
	}
	if got != want {
		t.Fatalf("Lease(%s, %s) = %v, want %v", key, holder, got, want)
	}
}

// A live lease is exclusive; its holder renews it, which pushes the expiry.
func TestLeaseExclusiveAndRenewed(t *testing.T) {
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	mustLease(t, s, "T/C/1", "a", 10*time.Second, true)
	mustLease(t, s, "T/C/1", "b", 10*time.Second, false)
	mustLease(t, s, "T/C/2", "b", 10*time.Second, true) // another key is free
	c.Add(8 * time.Second)
	mustLease(t, s, "T/C/1", "a", 10*time.Second, true) // renewal: expires at 18s now
	c.Add(8 * time.Second)
	mustLease(t, s, "T/C/1", "b", 10*time.Second, false) // 16s: a's renewed lease is live
	c.Add(3 * time.Second)
	mustLease(t, s, "T/C/1", "b", 10*time.Second, true) // 19s: expired, b takes it over
	mustLease(t, s, "T/C/1", "a", 10*time.Second, false)
}

// Releasing frees the lease at once; a release by someone who does not hold
// it changes nothing.
func TestLeaseRelease(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	mustLease(t, s, "T/C/1", "a", time.Minute, true)
	if err := s.ReleaseLease(ctx, "T/C/1", "b"); err != nil {
		t.Fatal(err)
	}
	mustLease(t, s, "T/C/1", "b", time.Minute, false)
	if err := s.ReleaseLease(ctx, "T/C/1", "a"); err != nil {
		t.Fatal(err)
	}
	mustLease(t, s, "T/C/1", "b", time.Minute, true)
	if err := s.ReleaseLease(ctx, "T/C/none", "a"); err != nil {
		t.Fatalf("releasing a lease nobody holds: %v", err)
	}
}

// Opening the store drops the leases: only one process uses the database,
// so they were held by a process that is gone, and the restarted one
// resumes its threads at once instead of after the TTL.
func TestLeasesClearedOnOpen(t *testing.T) {
	c := newClock()
	s := openAt(t, t.TempDir(), c)
	mustLease(t, s, "T/C/1", "a", time.Minute, true)
	mustLease(t, s, "T/C/1", "b", time.Minute, false)
	s = reopen(t, s, c)
	mustLease(t, s, "T/C/1", "b", time.Minute, true)
}

// Bad input is a clear error.
func TestLeaseBadInput(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), newClock())
	for _, tc := range []struct {
		key, holder string
		ttl         time.Duration
	}{{"", "a", time.Second}, {"k", "", time.Second}, {"k", "a", 0}} {
		if _, err := storetest.Lease(ctx, s, tc.key, tc.holder, tc.ttl); err == nil {
			t.Errorf("Lease(%q, %q, %s): no error", tc.key, tc.holder, tc.ttl)
		}
	}
	if err := s.ReleaseLease(ctx, "k", ""); err == nil {
		t.Error("ReleaseLease with an empty holder: no error")
	}
}

// Of many holders asking at once for a free lease, exactly one gets it.
func TestLeaseConcurrentTakersGetOne(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, t.TempDir(), nil)
	const n = 16
	got := make(chan bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ok, err := storetest.Lease(ctx, s, "T/C/1", fmt.Sprintf("r%d", i), time.Minute)
			if err != nil {
				t.Error(err)
			}
			got <- ok
		})
	}
	wg.Wait()
	close(got)
	winners := 0
	for ok := range got {
		if ok {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d holders got the lease, want 1", winners)
	}
}
