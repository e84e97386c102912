package bot

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"agentbot/engine"
)

// UsageStore keeps the tokens a workspace used per day.
type UsageStore interface {
	// AddDailyUsage adds tokens to a workspace's day and returns its total.
	AddDailyUsage(team, day string, tokens int) (int, error)
	// DailyUsage returns a workspace's tokens of a day.
	DailyUsage(team, day string) (int, error)
}

// Budgets are the optional token caps: per session and per workspace and
// day (UTC). Costs come from the model's reported usage, never estimates.
// The zero value has no caps.
type Budgets struct {
	// SessionTokens and DailyTokens are the caps; 0 means none.
	SessionTokens int
	DailyTokens   int
	// Admins may raise the caps; they are named in the messages.
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

// teamOf reads the workspace from a session key ("team/channel/thread").
func teamOf(key string) string {
	team, _, _ := strings.Cut(key, "/")
	return team
}

// Budget is the tightest cap on s, given the turn's usage so far; it is
// engine.Config.Budget.
func (b *Budgets) Budget(s *engine.Session, turn engine.Usage) engine.Budget {
	if b == nil {
		return engine.Budget{}
	}
	var caps []engine.Budget
	if b.SessionTokens > 0 {
		caps = append(caps, engine.Budget{Used: s.Usage.Tokens(), Limit: b.SessionTokens, Name: "session's token budget",
			Raise: b.raise("AGENTBOT_SESSION_TOKEN_BUDGET", "or start a new thread")})
	}
	if b.DailyTokens > 0 {
		used, _ := b.daily(teamOf(s.Key))
		caps = append(caps, engine.Budget{Used: used + turn.Tokens(), Limit: b.DailyTokens, Name: "workspace's daily token budget",
			Raise: b.raise("AGENTBOT_DAILY_TOKEN_BUDGET", "or wait until it resets at midnight UTC")})
	}
	var tight engine.Budget
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
		names := make([]string, len(b.Admins))
		for i, a := range b.Admins {
			names[i] = "<@" + a + ">"
		}
		who = "an admin (" + strings.Join(names, ", ") + ")"
	}
	return fmt.Sprintf("%s can raise %s, %s", who, setting, or)
}

// daily returns a workspace's tokens today.
func (b *Budgets) daily(team string) (int, error) {
	if b.Store != nil {
		return b.Store.DailyUsage(team, b.day())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mem[team+"/"+b.day()], nil
}

// Record adds a finished turn's usage to its workspace's day.
func (b *Budgets) Record(key string, u engine.Usage) error {
	if b == nil || u.Tokens() == 0 {
		return nil
	}
	team := teamOf(key)
	if b.Store != nil {
		_, err := b.Store.AddDailyUsage(team, b.day(), u.Tokens())
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

// budgetMessage is the plain message of a turn refused at a cap.
func budgetMessage(err error) (string, bool) {
	var be *engine.BudgetError
	if !errors.As(err, &be) {
		return "", false
	}
	bu := be.Budget
	return fmt.Sprintf("This thread can't continue: the %s is used up (%s of %s tokens). %s.",
		bu.Name, thousands(bu.Used), thousands(bu.Limit), capitalize(bu.Raise)), true
}

// statusLine renders a session's use against its caps for /agent status.
func (b *Budgets) statusLine(s *engine.Session) string {
	used := s.Usage.Tokens()
	if b == nil || b.SessionTokens == 0 {
		return fmt.Sprintf("%s tokens used (no session budget)", thousands(used))
	}
	return fmt.Sprintf("%s of %s tokens used (%d%%)", thousands(used), thousands(b.SessionTokens), used*100/b.SessionTokens)
}

// thousands writes n with thousands separators: 120,000.
func thousands(n int) string {
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

// statusText reports the caps for /agent status: the workspace's use today
// and the session cap.
func (b *Budgets) statusText(team string) string {
	if b == nil || (b.SessionTokens == 0 && b.DailyTokens == 0) {
		return "No token budgets are set."
	}
	var parts []string
	if b.DailyTokens > 0 {
		used, _ := b.daily(team)
		parts = append(parts, fmt.Sprintf("this workspace used %s of its %s tokens today (UTC)", thousands(used), thousands(b.DailyTokens)))
	}
	if b.SessionTokens > 0 {
		parts = append(parts, fmt.Sprintf("each thread may use %s tokens; `@agentbot status` in a thread shows its use", thousands(b.SessionTokens)))
	}
	return "Token budgets: " + strings.Join(parts, "; ") + "."
}
