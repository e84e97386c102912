package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
	"agentbot/storage/storetest"
)

// replicas opens two stores (replicas) on one fresh database.
func replicas(t *testing.T) (*postgres.Store, *postgres.Store) {
	url := pgtest.URL(t)
	return open(t, url), open(t, url)
}

// TestReplicaLeaseExclusive: while one replica holds a thread's lease the
// other cannot take it; after it expires (database clock) it can.
func TestReplicaLeaseExclusive(t *testing.T) {
	ctx := context.Background()
	a, b := replicas(t)
	if ok, err := storetest.Lease(ctx, a, "T/C/1", "replica-a", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("a: %v %v", ok, err)
	}
	if ok, err := storetest.Lease(ctx, b, "T/C/1", "replica-b", time.Minute); err != nil || ok {
		t.Fatalf("b took a live lease: %v %v", ok, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := storetest.Lease(ctx, b, "T/C/1", "replica-b", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b never took the expired lease")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ok, err := storetest.Lease(ctx, a, "T/C/1", "replica-a", time.Minute); err != nil || ok {
		t.Fatalf("a renewed a lease b holds: %v %v", ok, err)
	}
}

// TestReplicaLeaseRace: many replicas racing for one free lease: exactly
// one wins.
func TestReplicaLeaseRace(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	var stores []*postgres.Store
	for range 4 {
		stores = append(stores, open(t, url))
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for i, s := range stores {
		for j := range 5 {
			wg.Go(func() {
				ok, err := storetest.Lease(ctx, s, "T/C/race", fmt.Sprintf("r%d-%d", i, j), time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d holders won the lease, want 1", wins)
	}
}

// TestReplicaAdmitDedupe: the same event admitted on both replicas (Slack
// delivers it to either) is queued once; the queue is shared.
func TestReplicaAdmitDedupe(t *testing.T) {
	ctx := context.Background()
	a, b := replicas(t)
	for i := range 20 {
		keys := []string{fmt.Sprintf("Ev%d", i), fmt.Sprintf("C1/%d", i)}
		var wg sync.WaitGroup
		res := make([]bool, 2)
		for j, s := range []*postgres.Store{a, b} {
			wg.Go(func() {
				dup, _, err := storetest.Admit(ctx, s, keys, time.Minute, "T/C/1", []byte(fmt.Sprintf(`{"i":%d}`, i)))
				if err != nil {
					t.Error(err)
				}
				res[j] = dup
			})
		}
		wg.Wait()
		if res[0] == res[1] {
			t.Fatalf("event %d: dup on a %v, on b %v; want exactly one admitted", i, res[0], res[1])
		}
	}
	items, err := b.Pending(ctx, "T/C/1")
	if err != nil || len(items) != 20 {
		t.Fatalf("b sees %d queued (%v), want 20", len(items), err)
	}
	seq, _, ok, err := storage.Next(ctx, a, "T/C/1")
	if err != nil || !ok || seq != items[0].Seq {
		t.Fatalf("a's Next = %d %v %v, want %d", seq, ok, err, items[0].Seq)
	}
	if err := storetest.Dequeue(ctx, b, "T/C/1", seq); err != nil {
		t.Fatal(err)
	}
	if err := storetest.Dequeue(ctx, a, "T/C/1", seq); err == nil {
		t.Fatal("a dequeued what b had dequeued")
	}
}

// TestReplicaSessionHandover: a session saved on one replica continues on
// the other, and the first, with a stale idea of the stored count,
// appends correctly after it.
func TestReplicaSessionHandover(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := open(t, url), open(t, url)
	s, err := a.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	s.Messages = []transcript.Message{{Role: "system", Content: "0"}, {Role: "user", Content: "1"}}
	if err := a.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	onB, err := storage.Session(ctx, b, "T/C/1")
	if err != nil || len(onB.Messages) != 2 {
		t.Fatalf("b loads %v, %v", onB, err)
	}
	onB.Messages = append(onB.Messages, transcript.Message{Role: "assistant", Content: "2"}, transcript.Message{Role: "user", Content: "3"})
	if err := b.SaveSession(ctx, onB); err != nil {
		t.Fatal(err)
	}
	// a's copy is behind: saving it would shorten the transcript.
	if err := a.SaveSession(ctx, s); err == nil {
		t.Fatal("a saved a stale, shorter transcript")
	}
	s.Messages = append(onB.Messages[:4:4], transcript.Message{Role: "assistant", Content: "4"})
	if err := a.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := b.SessionByID(ctx, s.ID)
	if err != nil || len(got.Messages) != 5 {
		t.Fatalf("b sees %v, %v", got, err)
	}
	for i, m := range got.Messages {
		if m.Content != fmt.Sprint(i) {
			t.Fatalf("message %d is %q", i, m.Content)
		}
	}
	// One row per message.
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows int
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM messages WHERE session_id = $1`, s.ID).Scan(&rows); err != nil || rows != 5 {
		t.Fatalf("%d message rows (%v), want 5", rows, err)
	}
}

// TestReplicaNewSessionRace: two replicas creating a session for one key
// at once: one creates it, the other gets ErrExists.
func TestReplicaNewSessionRace(t *testing.T) {
	ctx := context.Background()
	a, b := replicas(t)
	for i := range 20 {
		key := fmt.Sprintf("T/C/%d", i)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for j, s := range []*postgres.Store{a, b} {
			wg.Go(func() { _, errs[j] = s.NewSession(ctx, key) })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("key %s: errors %v and %v; want one success", key, errs[0], errs[1])
		}
		for _, err := range errs {
			if err != nil && !errors.Is(err, storage.ErrExists) {
				t.Fatalf("key %s: %v, want ErrExists", key, err)
			}
		}
	}
}

// TestReplicaClockSkewDedupe: a replica whose clock runs 16 minutes ahead
// neither re-admits an event another replica admitted with a 10-minute
// mark, nor sweeps the mark early: dedupe follows the database's clock.
func TestReplicaClockSkewDedupe(t *testing.T) {
	ctx := context.Background()
	a, b := replicas(t)
	b.Now = func() time.Time { return time.Now().Add(16 * time.Minute) } // the replica's own clock, not a test shift
	if dup, _, err := storetest.Admit(ctx, a, []string{"Ev1"}, 10*time.Minute, "T/C/1", []byte(`1`)); err != nil || dup {
		t.Fatalf("a: %v %v", dup, err)
	}
	// b's first Seen sweeps the expired marks (by the database's clock).
	if dup, err := b.Seen(ctx, "Ev0", 10*time.Minute); err != nil || dup {
		t.Fatalf("Seen on the skewed replica: %v %v", dup, err)
	}
	if dup, _, err := storetest.Admit(ctx, b, []string{"Ev1"}, 10*time.Minute, "T/C/1", []byte(`2`)); err != nil || !dup {
		t.Fatalf("the skewed replica re-admitted the event: dup %v, %v", dup, err)
	}
	if dup, err := b.Seen(ctx, "Ev1", 10*time.Minute); err != nil || !dup {
		t.Fatalf("Seen on the skewed replica: %v %v", dup, err)
	}
	if items, _ := a.Pending(ctx, "T/C/1"); len(items) != 1 {
		t.Fatalf("queued %d items, want 1", len(items))
	}
}

// TestReplicaFencedAfterTakeover: the replica that lost a thread (it was
// frozen past its lease) can neither renew, save, mark nor dequeue.
func TestReplicaFencedAfterTakeover(t *testing.T) {
	ctx := context.Background()
	a, b := replicas(t)
	s, err := a.NewSession(ctx, "T/C/1")
	if err != nil {
		t.Fatal(err)
	}
	seq, err := storetest.Enqueue(ctx, a, "T/C/1", []byte(`1`))
	if err != nil {
		t.Fatal(err)
	}
	fa, ok, err := a.TakeLease(ctx, "T/C/1", "replica-a", 200*time.Millisecond)
	if err != nil || !ok {
		t.Fatalf("a: %v %v", ok, err)
	}
	var fb storage.Fence
	deadline := time.Now().Add(10 * time.Second)
	for fb.Token == 0 {
		if fb, _, err = b.TakeLease(ctx, "T/C/1", "replica-b", time.Minute); err != nil || time.Now().After(deadline) {
			t.Fatalf("b never took the expired lease: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleAssistant, Content: "late"})
	for name, err := range map[string]error{
		"renew":    a.RenewLease(ctx, fa, time.Minute),
		"save":     a.SaveSessionFenced(ctx, fa, s),
		"meta":     a.CompleteFenced(ctx, fa, 0, map[string]string{"bot.posted": "1"}),
		"complete": a.CompleteFenced(ctx, fa, seq, map[string]string{"bot.posted": "1"}),
		"check":    a.CheckFence(ctx, fa),
	} {
		if !errors.Is(err, storage.ErrFenced) {
			t.Errorf("%s by the replica that lost the lease = %v, want ErrFenced", name, err)
		}
	}
	if err := b.CompleteFenced(ctx, fb, seq, map[string]string{"bot.posted": "1"}); err != nil {
		t.Fatal(err)
	}
}
