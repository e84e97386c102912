package handoff

import (
	"fmt"
	"strings"
	"testing"
)

// A long thread keeps its opening message and the newest ones within the
// budget, and says how many were left out.
func TestFitContextKeepsOpeningAndNewest(t *testing.T) {
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("person %03d: %s", i, strings.Repeat("x", 100)))
	}
	got := Fit(lines)
	if len(got) > MaxBytes+500 {
		t.Fatalf("%d bytes, budget %d", len(got), MaxBytes)
	}
	for _, want := range []string{"person 000:", "person 399:", "messages left out"} {
		if !strings.Contains(got, want) {
			t.Fatalf("%q missing from the context", want)
		}
	}
	if strings.Contains(got, "person 200:") {
		t.Fatal("a middle message was kept over the budget")
	}
	if Fit(nil) != "" {
		t.Fatal("no lines, yet a context")
	}
	if short := Fit(lines[:3]); strings.Contains(short, "left out") || !strings.Contains(short, "person 002") {
		t.Fatalf("a short thread: %q", short)
	}
}
