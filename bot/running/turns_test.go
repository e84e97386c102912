package running

import (
	"context"
	"testing"
)

// A stopped turn is cancelled and remembers the first who stopped it; a
// thread with no running turn (never started, or ended) is not stopped,
// and ending a turn that a later one replaced keeps the later one.
func TestTurns(t *testing.T) {
	var r Turns
	if r.Stop("k", "U1") {
		t.Fatal("stopped a turn that never ran")
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := r.Start("k", cancel)
	if first.StoppedBy() != "" {
		t.Fatal("a running turn says it was stopped")
	}
	if !r.Stop("k", "U1") || ctx.Err() == nil {
		t.Fatal("Stop did not cancel the running turn")
	}
	first.Stop("U2")
	if got := first.StoppedBy(); got != "U1" {
		t.Fatalf("StoppedBy = %q, want the first who stopped it (U1)", got)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	second := r.Start("k", cancel2)
	r.End("k", first) // the old turn's end leaves the new one registered
	if !r.Stop("k", "U3") || ctx2.Err() == nil || second.StoppedBy() != "U3" {
		t.Fatal("ending a replaced turn unregistered its successor")
	}
	r.End("k", second)
	if r.Stop("k", "U4") {
		t.Fatal("stopped a turn that ended")
	}
}
