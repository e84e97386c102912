package budget

import (
	"fmt"
	"strings"
)

// Budget is a cap on the tokens the model may use: what is used so far,
// by the provider's reported usage, and the limit (0: no cap). Name says
// which cap it is and Raise who can raise it, for the people told.
type Budget struct {
	Used, Limit int
	Name, Raise string
}

// nearShare is the share of a cap at which a turn finishes early.
const nearShare = 0.9

// Over reports whether the cap is reached.
func (b Budget) Over() bool { return b.Limit > 0 && b.Used >= b.Limit }

// Near reports whether the cap is nearly reached.
func (b Budget) Near() bool { return b.Limit > 0 && float64(b.Used) >= nearShare*float64(b.Limit) }

// BudgetError is the error of a turn refused because a token cap is
// reached; nothing was sent to the model.
type BudgetError struct{ Budget Budget }

// Error names the cap, its use and who can raise it.
func (e *BudgetError) Error() string {
	b := e.Budget
	msg := fmt.Sprintf("the %s is used up (%d of %d tokens)", b.Name, b.Used, b.Limit)
	if b.Raise != "" {
		msg += "; " + b.Raise
	}
	return msg
}

// Message is the plain message of a turn refused at the cap.
func (e *BudgetError) Message() string {
	bu := e.Budget
	return fmt.Sprintf("This thread can't continue: the %s is used up (%s of %s tokens). %s.",
		bu.Name, Thousands(bu.Used), Thousands(bu.Limit), capitalize(bu.Raise))
}

// Thousands writes n with thousands separators: 120,000.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
