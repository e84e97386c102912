package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"agentbot/engine/budget"
)

// Budget is a cap on the tokens the model may use (see budget.Budget).
type Budget = budget.Budget

// BudgetError is the error of a turn refused because a token cap is
// reached (see budget.BudgetError).
type BudgetError = budget.BudgetError

// Thousands writes n with thousands separators: 120,000.
func Thousands(n int) string { return budget.Thousands(n) }

// budgetNote asks the model to finish the turn when a cap is near.
const budgetNote = "(Runtime: the token budget is nearly used up. Answer now without tools: say what is done, what is saved, and what the next step is.)"

// budget returns the tightest cap on s, given the turn's usage so far.
func (e *Engine) budget(ctx context.Context, s *Session, turn Usage) Budget {
	if e.cfg.Budget == nil {
		return Budget{}
	}
	return e.cfg.Budget(ctx, s, turn)
}

// UsageStore keeps the tokens a workspace used per day.
type UsageStore interface {
	// AddDailyUsage adds tokens to a workspace's day and returns its total.
	AddDailyUsage(ctx context.Context, team, day string, tokens int) (int, error)
}

// Budgets are the optional token caps: per session and per workspace and
// day (UTC). Costs come from the model's reported usage, never estimates.
// A session's workspace is the first segment of its key (the Slack team
// of "team/channel/thread", "chat" for the terminal's "chat/name"). The
// zero value has no caps; a nil *Budgets neither.
type Budgets struct {
	// SessionTokens and DailyTokens are the caps; 0 means none.
	SessionTokens int
	DailyTokens   int
	// Admins name who may raise the caps, as the messages show them (the
	// front end formats them, such as Slack mentions).
	Admins []string
	// Store keeps daily usage; nil keeps it in memory only.
	Store UsageStore
	// Now is the clock (default time.Now).
	Now func() time.Time

	mu  sync.Mutex
	mem map[string]int // team/day -> tokens, when Store is nil
}

// day is today's UTC date.
func (b *Budgets) day() string {
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	return now().UTC().Format("2006-01-02")
}

// workspaceOf reads the workspace from a session key: its first segment.
func workspaceOf(key string) string {
	team, _, _ := strings.Cut(key, "/")
	return team
}

// Budget is the tightest cap on s, given the turn's usage so far; New
// makes it Config.Budget when Config.Budgets is set.
func (b *Budgets) Budget(ctx context.Context, s *Session, turn Usage) Budget {
	if b == nil {
		return Budget{}
	}
	var caps []Budget
	if b.SessionTokens > 0 {
		caps = append(caps, Budget{Used: s.Usage.Tokens(), Limit: b.SessionTokens, Name: "session's token budget",
			Raise: b.raise("AGENTBOT_SESSION_TOKEN_BUDGET", "or start a new thread")})
	}
	if b.DailyTokens > 0 {
		used, _ := b.Daily(ctx, workspaceOf(s.Key))
		caps = append(caps, Budget{Used: used + turn.Tokens(), Limit: b.DailyTokens, Name: "workspace's daily token budget",
			Raise: b.raise("AGENTBOT_DAILY_TOKEN_BUDGET", "or wait until it resets at midnight UTC")})
	}
	var tight Budget
	for _, c := range caps {
		if tight.Limit == 0 || c.Limit-c.Used < tight.Limit-tight.Used {
			tight = c
		}
	}
	return tight
}

// raise says who can raise a cap.
func (b *Budgets) raise(setting, or string) string {
	who := "an admin"
	if len(b.Admins) > 0 {
		who = "an admin (" + strings.Join(b.Admins, ", ") + ")"
	}
	return fmt.Sprintf("%s can raise %s, %s", who, setting, or)
}

// Daily returns a workspace's tokens today.
func (b *Budgets) Daily(ctx context.Context, team string) (int, error) {
	if b.Store != nil {
		return b.Store.AddDailyUsage(ctx, team, b.day(), 0)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mem[team+"/"+b.day()], nil
}

// Record adds a finished turn's usage to the day of the workspace of the
// session key.
func (b *Budgets) Record(ctx context.Context, key string, u Usage) error {
	if b == nil || u.Tokens() == 0 {
		return nil
	}
	team := workspaceOf(key)
	if b.Store != nil {
		_, err := b.Store.AddDailyUsage(ctx, team, b.day(), u.Tokens())
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mem == nil {
		b.mem = map[string]int{}
	}
	b.mem[team+"/"+b.day()] += u.Tokens()
	return nil
}

// Status renders a session's use against its session cap.
func (b *Budgets) Status(s *Session) string {
	used := s.Usage.Tokens()
	if b == nil || b.SessionTokens == 0 {
		return fmt.Sprintf("%s tokens used (no session budget)", Thousands(used))
	}
	return fmt.Sprintf("%s of %s tokens used (%d%%)", Thousands(used), Thousands(b.SessionTokens), used*100/b.SessionTokens)
}
