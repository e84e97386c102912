package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// budgetRig is a rig whose engine and bot share token caps.
func budgetRig(t *testing.T, b *engine.Budgets) *rig {
	return newRig(t, rigOpts{
		engine: func(c *engine.Config) { c.Budgets = b },
		mutate: func(c *bot.Config) { c.Admins = []string{"UADMIN"} },
	})
}

// botText waits until a bot message in thread holds want.
func (r *rig) waitText(thread, want string) {
	r.t.Helper()
	r.waitFor(want, func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), want) {
				return true
			}
		}
		for _, s := range r.slack.Streams() {
			if s.ThreadTS == thread && strings.Contains(s.Text, want) {
				return true
			}
		}
		return false
	})
}

// A session cap, counted from the model's reported usage: near it the agent
// finishes the turn and says so; at it, a new message gets a plain message
// naming the limit and who can raise it, with no model call; the thread's
// status shows the use.
func TestSessionTokenBudget(t *testing.T) {
	ctx := context.Background()
	b := &engine.Budgets{SessionTokens: 1000, Admins: []string{"<@UADMIN>"}}
	r := budgetRig(t, b)
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}, Usage: fakemodel.Usage{Prompt: 900, Completion: 20}},
		fakemodel.Reply{Text: "Wrapping up here.", Usage: fakemodel.Usage{Prompt: 70, Completion: 10}},
	)
	thread, _ := r.mention("plan the reorder feature", "")
	r.waitText(thread, "Wrapping up here.")
	r.waitText(thread, "close to the session's token budget")
	calls := r.model.Calls()
	r.reply("and the next step?", thread)
	r.waitText(thread, "the session's token budget is used up (1,000 of 1,000 tokens)")
	r.waitText(thread, "An admin (<@UADMIN>) can raise AGENTBOT_SESSION_TOKEN_BUDGET")
	if r.model.Calls() != calls {
		t.Fatal("a turn at the cap called the model")
	}
	r.reply("status", thread)
	r.waitText(thread, "1,000 of 1,000 tokens used (100%)")
}

// A daily cap per workspace: once one thread used it, another thread is
// refused; the usage survives a restart (it is in the store).
func TestDailyTokenBudget(t *testing.T) {
	ctx := context.Background()
	b := &engine.Budgets{DailyTokens: 500}
	r := budgetRig(t, b)
	b.Store = r.st
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "First answer.", Usage: fakemodel.Usage{Prompt: 480, Completion: 40}})
	first, _ := r.mention("first question, please", "")
	r.waitText(first, "First answer.")
	second, _ := r.mention("another thread, please", "")
	r.waitText(second, "workspace's daily token budget is used up (520 of 500 tokens)")
	r.waitText(second, "resets at midnight UTC")
	if n, _ := r.st.AddDailyUsage(ctx, r.slack.TeamID(), todayUTC(), 0); n != 520 {
		t.Fatalf("stored daily usage = %d", n)
	}
}

func todayUTC() string { return time.Now().UTC().Format("2006-01-02") }
