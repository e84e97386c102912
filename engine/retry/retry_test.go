package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

var errBusy = errors.New("busy")

// waits records the waits a Policy asked for instead of sleeping.
type waits struct{ ds []time.Duration }

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.ds = append(w.ds, d)
	return ctx.Err()
}

// top is a jitter source that always picks the top of the range.
func top(n int64) int64 { return n - 1 }

// bottom always picks the bottom.
func bottom(int64) int64 { return 0 }

func TestBackoffDoublesUpToMax(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Max: time.Second, Rand: top}
	for try, want := range map[int]time.Duration{1: 100, 2: 200, 3: 400, 4: 800, 5: 1000, 6: 1000, 200: 1000} {
		if got := p.Backoff(try); got != want*time.Millisecond {
			t.Errorf("Backoff(%d) = %v, want %v", try, got, want*time.Millisecond)
		}
	}
	p.Rand = bottom
	if got := p.Backoff(3); got != 200*time.Millisecond {
		t.Errorf("Backoff(3) at the bottom of the jitter = %v, want 200ms", got)
	}
	if got := (Policy{Base: time.Hour, Rand: top}).Backoff(1000); got <= 0 {
		t.Errorf("uncapped Backoff(1000) = %v, want positive (no overflow)", got)
	}
	if got := (Policy{}).Backoff(3); got != 0 {
		t.Errorf("zero Base: Backoff = %v, want 0", got)
	}
}

// The jitter stays within [d/2, d] and varies.
func TestBackoffJitterInRange(t *testing.T) {
	p := Policy{Base: 500 * time.Millisecond, Max: 30 * time.Second}
	for try, hi := range map[int]time.Duration{1: 500 * time.Millisecond, 2: time.Second, 3: 2 * time.Second, 10: 30 * time.Second} {
		seen := map[time.Duration]bool{}
		for range 100 {
			d := p.Backoff(try)
			if d < hi/2 || d > hi {
				t.Fatalf("Backoff(%d) = %v, want in [%v, %v]", try, d, hi/2, hi)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("Backoff(%d) has no jitter: %v", try, seen)
		}
	}
	// The source is asked for exactly the range [0, d-d/2].
	var asked []int64
	Policy{Base: 3 * time.Nanosecond, Rand: func(n int64) int64 { asked = append(asked, n); return 0 }}.Backoff(1)
	if len(asked) != 1 || asked[0] != 3 {
		t.Errorf("jitter range asked %v, want [3] (for [1ns, 3ns])", asked)
	}
}

func TestDoHonoursRetryAfter(t *testing.T) {
	var w waits
	p := Policy{MaxAttempts: 4, Base: time.Second, Max: time.Second, Rand: top, Sleep: w.sleep}
	tries := 0
	err := p.Do(context.Background(), func(try int) error {
		tries++
		switch try {
		case 1:
			return After(errBusy, 7*time.Second) // longer than the backoff: waited
		case 2:
			return After(errBusy, time.Millisecond) // shorter: the backoff is
		case 3:
			return errBusy
		}
		return nil
	})
	if err != nil || tries != 4 {
		t.Fatalf("Do = %v after %d tries, want nil after 4", err, tries)
	}
	want := []time.Duration{7 * time.Second, time.Second, time.Second}
	if len(w.ds) != len(want) {
		t.Fatalf("waits %v, want %v", w.ds, want)
	}
	for i := range want {
		if w.ds[i] != want[i] {
			t.Fatalf("waits %v, want %v", w.ds, want)
		}
	}
	// A Retry-After is honoured beyond Max, which caps only the backoff.
	if d := p.Wait(1, After(errBusy, time.Hour)); d != time.Hour {
		t.Errorf("Wait with Retry-After 1h = %v", d)
	}
	if d, ok := RetryAfter(errors.Join(errors.New("x"), After(errBusy, 2*time.Second))); !ok || d != 2*time.Second {
		t.Errorf("RetryAfter of a wrapped mark = %v, %v", d, ok)
	}
}

func TestDoBoundedByMaxAttempts(t *testing.T) {
	var w waits
	var retried []int
	p := Policy{MaxAttempts: 3, Base: time.Millisecond, Sleep: w.sleep,
		OnRetry: func(try int, err error, _ time.Duration) {
			if _, ok := RetryAfter(err); ok {
				t.Errorf("OnRetry got a marked error")
			}
			retried = append(retried, try)
		}}
	tries := 0
	err := p.Do(context.Background(), func(int) error { tries++; return After(errBusy, time.Millisecond) })
	if tries != 3 || len(w.ds) != 2 || len(retried) != 2 || retried[1] != 2 {
		t.Fatalf("%d tries, waits %v, retried %v; want 3 tries, 2 waits", tries, w.ds, retried)
	}
	if err != errBusy {
		t.Fatalf("Do = %#v, want the last error unmarked", err)
	}
	// MaxAttempts below 1 means one try.
	tries = 0
	_ = Policy{Sleep: w.sleep}.Do(context.Background(), func(int) error { tries++; return errBusy })
	if tries != 1 {
		t.Errorf("zero MaxAttempts made %d tries", tries)
	}
}

func TestDoStop(t *testing.T) {
	var w waits
	tries := 0
	err := Policy{MaxAttempts: 5, Sleep: w.sleep}.Do(context.Background(), func(int) error {
		tries++
		return Stop(After(errBusy, time.Second))
	})
	if err != errBusy || tries != 1 || len(w.ds) != 0 {
		t.Fatalf("Do = %v after %d tries, waits %v; want errBusy at once", err, tries, w.ds)
	}
	if Stop(nil) != nil || After(nil, time.Second) != nil {
		t.Error("marking nil is not nil")
	}
}

// A context ended during a wait ends Do with the wait's error; with the
// real Sleep, too, without waiting.
func TestDoCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tries := 0
	p := Policy{MaxAttempts: 5, Base: time.Hour, Sleep: func(context.Context, time.Duration) error {
		cancel()
		return ctx.Err()
	}}
	err := p.Do(ctx, func(int) error { tries++; return errBusy })
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Fatalf("Do = %v after %d tries, want context.Canceled after 1", err, tries)
	}
	tries = 0
	err = Policy{MaxAttempts: 5, Base: time.Hour}.Do(ctx, func(int) error { tries++; return errBusy })
	if !errors.Is(err, context.Canceled) || tries != 1 {
		t.Fatalf("real Sleep: Do = %v after %d tries, want context.Canceled after 1", err, tries)
	}
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled ctx = %v", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatalf("Sleep 1ms = %v", err)
	}
}
