package bot

import (
	"errors"

	"agentbot/engine"
)

// budgetMessage is the plain message of a turn refused at a cap (the
// caps themselves are engine.Budgets).
func budgetMessage(err error) (string, bool) {
	var be *engine.BudgetError
	if !errors.As(err, &be) {
		return "", false
	}
	return be.Message(), true
}
