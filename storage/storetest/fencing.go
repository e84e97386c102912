package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// take takes key's lease for holder and returns the fence, or fails.
func take(t *testing.T, b storage.Backend, key, holder string, ttl time.Duration) storage.Fence {
	ctx := context.Background()
	t.Helper()
	f, ok, err := b.TakeLease(ctx, key, holder, ttl)
	if err != nil || !ok || f.Token == 0 || f.Key != key || f.Holder != holder {
		t.Fatalf("TakeLease(%s, %s) = %+v, %v, %v", key, holder, f, ok, err)
	}
	return f
}

func fenced(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, storage.ErrFenced) {
		t.Fatalf("%s with a stale fence = %v, want ErrFenced", what, err)
	}
}

func leaseTokensGrow(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	fa := take(t, b, "T/C/1", "a", time.Minute)
	must(t, b.CheckFence(ctx, fa))
	if _, ok, err := b.TakeLease(ctx, "T/C/1", "b", time.Minute); ok || err != nil {
		t.Fatalf("b took a's live lease: %v, %v", ok, err)
	}
	must(t, b.RenewLease(ctx, fa, time.Minute))
	must(t, b.ReleaseLease(ctx, "T/C/1", "a"))
	fenced(t, "CheckFence after release", b.CheckFence(ctx, fa))
	fb := take(t, b, "T/C/1", "b", time.Minute)
	if fb.Token <= fa.Token {
		t.Fatalf("token %d after %d: tokens do not grow", fb.Token, fa.Token)
	}
	fenced(t, "CheckFence of the old holder", b.CheckFence(ctx, fa))
	must(t, b.CheckFence(ctx, fb))
	// Taking one's own live lease again fences the earlier fence too.
	fb2 := take(t, b, "T/C/1", "b", time.Minute)
	if fb2.Token <= fb.Token {
		t.Fatalf("token %d after %d on a re-take", fb2.Token, fb.Token)
	}
	fenced(t, "CheckFence of a re-taken lease", b.CheckFence(ctx, fb))
	must(t, b.CheckFence(ctx, fb2))
	// A forged or unknown fence is refused.
	fenced(t, "CheckFence of a wrong token", b.CheckFence(ctx, storage.Fence{Key: "T/C/1", Holder: "b", Token: fb2.Token + 1000}))
	fenced(t, "CheckFence of a key without lease", b.CheckFence(ctx, storage.Fence{Key: "T/C/9", Holder: "b", Token: 1}))
	if err := b.CheckFence(ctx, storage.Fence{Key: "T/C/1", Holder: "b"}); err == nil {
		t.Error("CheckFence without a token succeeded")
	}
}

func leaseRenewNeverRetakes(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	// Released: a renewal does not take it back, and another can take it.
	fa := take(t, b, "k", "a", time.Minute)
	must(t, b.ReleaseLease(ctx, "k", "a"))
	fenced(t, "RenewLease after release", b.RenewLease(ctx, fa, time.Minute))
	fb := take(t, b, "k", "b", time.Minute)
	fenced(t, "RenewLease of a lease taken over", b.RenewLease(ctx, fa, time.Minute))
	must(t, b.CheckFence(ctx, fb))
	// Expired: a renewal is refused even though nobody took it (leases may
	// follow a clock the test cannot move, so this waits for a short one).
	fc := take(t, b, "k2", "a", 50*time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for b.CheckFence(ctx, fc) == nil {
		if time.Now().After(deadline) {
			t.Fatal("a 50 ms lease never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fenced(t, "RenewLease after expiry", b.RenewLease(ctx, fc, time.Minute))
	fenced(t, "CheckFence after expiry", b.CheckFence(ctx, fc))
	if err := b.RenewLease(ctx, fb, 0); err == nil {
		t.Error("RenewLease with ttl 0 succeeded")
	}
}

func fencedWritesRefused(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	s := newSession(t, b, "T/C/1")
	fa := take(t, b, "T/C/1", "a", time.Minute)
	s.Messages = append(s.Messages, msg(transcript.RoleUser, "one"))
	must(t, b.SaveSessionFenced(ctx, fa, s))
	must(t, b.CompleteFenced(ctx, fa, 0, map[string]string{"x": "1"}))
	// Another holder takes the thread over; a's writes change nothing.
	must(t, b.ReleaseLease(ctx, "T/C/1", "a"))
	fb := take(t, b, "T/C/1", "b", time.Minute)
	stale := *s
	stale.Messages = append(append([]transcript.Message(nil), s.Messages...), msg(transcript.RoleAssistant, "late"))
	fenced(t, "SaveSessionFenced", b.SaveSessionFenced(ctx, fa, &stale))
	fenced(t, "CompleteFenced of no item (meta)", b.CompleteFenced(ctx, fa, 0, map[string]string{"x": "2"}))
	got, err := storage.Session(ctx, b, "T/C/1")
	must(t, err)
	if len(got.Messages) != 1 || got.Meta["x"] != "1" {
		t.Fatalf("stale writes landed: %d messages, meta %v", len(got.Messages), got.Meta)
	}
	// The holder's own writes go through.
	must(t, b.SaveSessionFenced(ctx, fb, &stale))
	must(t, b.CompleteFenced(ctx, fb, 0, map[string]string{"x": "3"}))
	if got, _ = storage.Session(ctx, b, "T/C/1"); len(got.Messages) != 2 || got.Meta["x"] != "3" {
		t.Fatalf("the holder's writes: %d messages, meta %v", len(got.Messages), got.Meta)
	}
	// A fence of another key does not cover this session.
	fo := take(t, b, "T/C/2", "b", time.Minute)
	if err := b.SaveSessionFenced(ctx, fo, &stale); err == nil {
		t.Error("SaveSessionFenced under another key's fence succeeded")
	}
}

func completeFenced(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	newSession(t, b, "T/C/1")
	seq1, err := Enqueue(ctx, b, "T/C/1", []byte(`1`))
	must(t, err)
	seq2, err := Enqueue(ctx, b, "T/C/1", []byte(`2`))
	must(t, err)
	fa := take(t, b, "T/C/1", "a", time.Minute)
	must(t, b.ReleaseLease(ctx, "T/C/1", "a"))
	fb := take(t, b, "T/C/1", "b", time.Minute)
	fenced(t, "CompleteFenced", b.CompleteFenced(ctx, fa, seq1, map[string]string{"posted": "1"}))
	if items, _ := b.Pending(ctx, "T/C/1"); len(items) != 2 {
		t.Fatalf("a fenced complete dequeued: %+v", items)
	}
	if s, _ := b.FindMeta(ctx, "T/C/1"); s.Meta["posted"] != "" {
		t.Fatalf("a fenced complete set the marker: %v", s.Meta)
	}
	must(t, b.CompleteFenced(ctx, fb, seq1, map[string]string{"posted": "1"}))
	if s, _ := b.FindMeta(ctx, "T/C/1"); s.Meta["posted"] != "1" {
		t.Fatalf("marker after complete: %v", s.Meta)
	}
	if seq, _, _, _ := storage.Next(ctx, b, "T/C/1"); seq != seq2 {
		t.Fatalf("Next after complete = %d, want %d", seq, seq2)
	}
	// Twice: not found, and the marker stays as it was.
	if err := b.CompleteFenced(ctx, fb, seq1, map[string]string{"posted": "x"}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second complete = %v, want ErrNotFound", err)
	}
	if s, _ := b.FindMeta(ctx, "T/C/1"); s.Meta["posted"] != "1" {
		t.Fatalf("a failed complete changed the marker: %v", s.Meta)
	}
	// A thread without a session completes too.
	seq3, err := Enqueue(ctx, b, "T/C/none", []byte(`3`))
	must(t, err)
	fn := take(t, b, "T/C/none", "b", time.Minute)
	must(t, b.CompleteFenced(ctx, fn, seq3, map[string]string{"posted": "3"}))
	if items, _ := b.Pending(ctx, "T/C/none"); len(items) != 0 {
		t.Fatalf("not dequeued: %+v", items)
	}
}

func queueOrdersByTs(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	ts := func(n int) string { return fmt.Sprintf("1700000000.%06d", n) }
	var chans []<-chan storage.Admission
	for _, n := range []int{300, 100, 200} { // 100 redelivered after 300
		chans = append(chans, Done(b.Admit(ctx, storage.OrderOf(ts(n)), []string{ts(n)}, time.Minute, "k", []byte(fmt.Sprint(n)))))
	}
	for _, ch := range chans {
		if a := <-ch; a.Err != nil || a.Dup {
			t.Fatalf("admission %+v", a)
		}
	}
	// An item without a ts is ordered by its admission, now: after them.
	if _, _, err := Admit(ctx, b, []string{"click"}, time.Minute, "k", []byte(`"click"`)); err != nil {
		t.Fatal(err)
	}
	items, err := b.Pending(ctx, "k")
	must(t, err)
	var got []string
	for _, it := range items {
		got = append(got, string(it.Payload))
	}
	if fmt.Sprint(got) != `[100 200 300 "click"]` {
		t.Fatalf("queue order %v, want by ts then admission", got)
	}
	if items[0].Order != storage.OrderOf(ts(100)) {
		t.Errorf("Order = %d, want %d", items[0].Order, storage.OrderOf(ts(100)))
	}
	if _, p, _, _ := storage.Next(ctx, b, "k"); string(p) != "100" {
		t.Fatalf("Next = %s, want the earliest message", p)
	}
	// Dequeue finds an item wherever it is in the order.
	must(t, Dequeue(ctx, b, "k", items[2].Seq))
	if items, _ = b.Pending(ctx, "k"); len(items) != 3 || string(items[2].Payload) != `"click"` {
		t.Fatalf("after dequeue of the middle: %+v", items)
	}
}
