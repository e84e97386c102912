package bot

import (
	"errors"
	"fmt"
	"strings"

	"agentbot/engine"
)

// budgetMessage is the plain message of a turn refused at a cap.
func budgetMessage(err error) (string, bool) {
	var be *engine.BudgetError
	if !errors.As(err, &be) {
		return "", false
	}
	return be.Message(), true
}

// budgetStatus reports the caps for /agent status: the workspace's use
// today and the session cap.
func budgetStatus(b *engine.Budgets, team string) string {
	if b == nil || (b.SessionTokens == 0 && b.DailyTokens == 0) {
		return "No token budgets are set."
	}
	var parts []string
	if b.DailyTokens > 0 {
		used, _ := b.Daily(team)
		parts = append(parts, fmt.Sprintf("this workspace used %s of its %s tokens today (UTC)", engine.Thousands(used), engine.Thousands(b.DailyTokens)))
	}
	if b.SessionTokens > 0 {
		parts = append(parts, fmt.Sprintf("each thread may use %s tokens; `@agentbot status` in a thread shows its use", engine.Thousands(b.SessionTokens)))
	}
	return "Token budgets: " + strings.Join(parts, "; ") + "."
}
