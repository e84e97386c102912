package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// Opening the agent's DM pane greets once a day and suggests up to four
// prompts: the default agent's menu, or the agents to pick from.
func TestAgentPaneGreetsWithSuggestedPrompts(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	const dm = "D0PANE1"
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), dm, "product-lead")
	open := func(ch string) {
		r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "channel": ch, "tab": "messages"})
	}
	open(dm)
	r.waitFor("the suggested prompts", func() bool { return len(r.slack.CallsTo("assistant.threads.setSuggestedPrompts")) == 1 })
	c := r.slack.CallsTo("assistant.threads.setSuggestedPrompts")[0]
	prompts := c.Form.Get("prompts")
	for _, want := range []string{`"message":"*brief"`, `"message":"*prd"`} {
		if !strings.Contains(prompts, want) {
			t.Fatalf("prompts %s lack %s", prompts, want)
		}
	}
	if strings.Count(prompts, `"message"`) != 4 || strings.Contains(prompts, "*help") {
		t.Fatalf("want four prompts without *help: %s", prompts)
	}
	// An agent app's prompts show only without thread_ts: with it the call
	// silently fails (the fake records no prompts, and a violation).
	if shown := r.slack.SuggestedPromptsSet(); len(shown) != 1 || shown[0].ThreadTS != "" || len(shown[0].Prompts) != 4 {
		t.Fatalf("prompts Slack shows: %+v", shown)
	}
	open(dm) // the same user, the same day: no second greeting
	// A sync point: another user's open is answered after the repeat.
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": "U0OTHER9", "channel": "D0PANE2", "tab": "messages"})
	r.waitFor("the other user's prompts", func() bool { return len(r.slack.CallsTo("assistant.threads.setSuggestedPrompts")) >= 2 })
	if n := len(r.slack.CallsTo("assistant.threads.setSuggestedPrompts")); n != 2 {
		t.Fatalf("%d greetings for two users, want 2 (one per user and day)", n)
	}
}

// Without a default agent, the pane suggests the agents; the context the
// user looks at reaches the agent; a DM session's title names the agent.
func TestAgentPaneContextAndTitle(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	const dm = "D0PANE3"
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "channel": dm, "tab": "messages"})
	r.waitFor("the suggested prompts", func() bool { return len(r.slack.CallsTo("assistant.threads.setSuggestedPrompts")) == 1 })
	if p := r.slack.CallsTo("assistant.threads.setSuggestedPrompts")[0].Form.Get("prompts"); !strings.Contains(p, `"message":"use product-lead"`) {
		t.Fatalf("prompts without a default: %s", p)
	}
	r.slack.SendEvent(map[string]any{"type": "app_context_changed", "user": user, "channel": dm,
		"context": map[string]any{"entities": []any{map[string]any{"type": "slack#/types/channel_id", "value": "C0LOOKING"}}}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), dm, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "I see the channel."})
	ts := sendMessage(r, dm, "im", "what is going on over there?", "")
	r.waitFor("the answer", func() bool { return r.model.Calls() == 1 })
	if in := r.model.Requests()[0].LastUserText(); !strings.Contains(in, "<#C0LOOKING>") {
		t.Fatalf("the agent was not told the channel: %q", in)
	}
	r.waitFor("the title", func() bool { return len(r.slack.CallsTo("assistant.threads.setTitle")) > 0 })
	if c := r.slack.CallsTo("assistant.threads.setTitle")[0]; !strings.Contains(c.Form.Get("title"), "Maren") || c.Form.Get("thread_ts") != ts {
		t.Fatalf("title call: %v", c.Form)
	}
}
