package engine

import (
	"fmt"
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

// budgetNote asks the model to finish the turn when a cap is near.
const budgetNote = "(Runtime: the token budget is nearly used up. Answer now without tools: say what is done, what is saved, and what the next step is.)"

// budget returns the tightest cap on s, given the turn's usage so far.
func (e *Engine) budget(s *Session, turn Usage) Budget {
	if e.cfg.Budget == nil {
		return Budget{}
	}
	return e.cfg.Budget(s, turn)
}
