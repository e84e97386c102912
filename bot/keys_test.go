package bot

import "testing"

// Thread keys round-trip, and keys of another shape are not a thread's.
func TestThreadKey(t *testing.T) {
	k := threadKey{Team: "T1", Channel: "D2", Thread: "1700000000.000100"}
	if got, ok := parseThreadKey(k.String()); !ok || got != k || !got.dm() {
		t.Fatalf("round trip of %v: %v %v", k, got, ok)
	}
	if _, ok := parseThreadKey("chat/name"); ok {
		t.Fatal("a terminal session key parsed as a thread's")
	}
}
