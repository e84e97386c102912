// Package retry is agentbot's one retry loop and its one context-aware
// sleep: a jittered exponential backoff that honours a server's
// Retry-After, bounded by a number of attempts and a longest backoff.
// Both engine and bot use it; it imports neither.
package retry

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"
)

// Sleep waits d, or until ctx ends; then it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Policy says how often and how long to wait between tries.
type Policy struct {
	// MaxAttempts is the number of tries in all, the first included; less
	// than 1 means 1.
	MaxAttempts int
	// Base is the backoff after the first failure, before jitter; each
	// further failure doubles it. Zero waits only what Retry-After asks.
	Base time.Duration
	// Max caps the backoff (not a Retry-After); zero means no cap.
	Max time.Duration
	// Sleep waits between tries; nil means the package's Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, n) for the jitter; nil means
	// math/rand/v2's.
	Rand func(n int64) int64
	// OnRetry, when set, is called before each wait with the try that
	// failed (1-based), its error and the wait.
	OnRetry func(try int, err error, wait time.Duration)
}

// Backoff returns the wait after failed try (1-based): Base * 2^(try-1),
// capped at Max, with equal jitter, i.e. uniformly in [d/2, d]. Half the
// delay is kept so a burst of clients still spreads out but never retries
// at once.
func (p Policy) Backoff(try int) time.Duration {
	d := p.Base
	if d <= 0 {
		return 0
	}
	for i := 1; i < try && (p.Max <= 0 || d < p.Max); i++ {
		if d > math.MaxInt64/2 {
			break
		}
		d *= 2
	}
	if p.Max > 0 {
		d = min(d, p.Max)
	}
	half := d / 2
	return half + time.Duration(p.rand(int64(d-half)+1))
}

// Wait returns the wait after failed try whose error is err: the backoff,
// or the Retry-After err carries (After), whichever is longer.
func (p Policy) Wait(try int, err error) time.Duration {
	d := p.Backoff(try)
	if ra, ok := RetryAfter(err); ok {
		d = max(d, ra)
	}
	return d
}

// Do calls attempt with try = 1, 2, … until it returns nil, returns an
// error marked Stop, or MaxAttempts tries were made, waiting Wait between
// tries. It returns nil, the last attempt's error (without its Stop or
// After mark), or the wait's error when ctx ended during a wait.
func (p Policy) Do(ctx context.Context, attempt func(try int) error) error {
	for try := 1; ; try++ {
		err := attempt(try)
		if err == nil {
			return nil
		}
		if s, ok := err.(*stopError); ok {
			return unmark(s.err)
		}
		if try >= p.MaxAttempts {
			return unmark(err)
		}
		wait := p.Wait(try, err)
		if p.OnRetry != nil {
			p.OnRetry(try, unmark(err), wait)
		}
		if serr := p.sleep(ctx, wait); serr != nil {
			return serr
		}
	}
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

func (p Policy) rand(n int64) int64 {
	if p.Rand != nil {
		return p.Rand(n)
	}
	return rand.Int64N(n)
}

// Stop marks err as not worth another try: Do returns it at once.
func Stop(err error) error {
	if err == nil {
		return nil
	}
	return &stopError{err}
}

type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// After marks err with the wait the server asked for (Retry-After): Do
// waits at least d before the next try.
func After(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &afterError{err: err, after: d}
}

type afterError struct {
	err   error
	after time.Duration
}

func (e *afterError) Error() string { return e.err.Error() }
func (e *afterError) Unwrap() error { return e.err }

// RetryAfter returns the wait err was marked with (After).
func RetryAfter(err error) (time.Duration, bool) {
	if a, ok := errors.AsType[*afterError](err); ok {
		return a.after, true
	}
	return 0, false
}

// unmark strips an After mark.
func unmark(err error) error {
	if a, ok := err.(*afterError); ok {
		return a.err
	}
	return err
}
