package budget

import "testing"

// A cap is near at 90% and over at 100%; its error names it, its use and
// who can raise it, with thousands separators.
func TestBudget(t *testing.T) {
	b := Budget{Used: 900, Limit: 1000, Name: "session's token budget", Raise: "an admin can raise it"}
	if !b.Near() || b.Over() || (Budget{Used: 5}).Near() {
		t.Fatalf("near/over wrong for %+v", b)
	}
	b.Used = 120000
	b.Limit = 120000
	err := &BudgetError{Budget: b}
	if !b.Over() || err.Message() != "This thread can't continue: the session's token budget is used up (120,000 of 120,000 tokens). An admin can raise it." {
		t.Fatalf("message %q", err.Message())
	}
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5: "-5"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
