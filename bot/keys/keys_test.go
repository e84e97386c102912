package keys

import "testing"

// Thread keys round-trip, and keys of another shape are not a thread's.
func TestThreadKey(t *testing.T) {
	k := Thread{Team: "T1", Channel: "D2", Thread: "1700000000.000100"}
	if got, ok := ParseThread(k.String()); !ok || got != k || !got.DM() {
		t.Fatalf("round trip of %v: %v %v", k, got, ok)
	}
	if _, ok := ParseThread("chat/name"); ok {
		t.Fatal("a terminal session key parsed as a thread's")
	}
}
