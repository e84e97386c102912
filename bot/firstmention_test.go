package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// A mention holding only a greeting gets the agent's greeting and menu,
// and no model call.
func TestFirstMentionGreetingOnly(t *testing.T) {
	ctx := context.Background()
	for _, hello := range []string{"hello", "hi!", "good morning", "👋", "Hello there"} {
		t.Run(hello, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
			thread, _ := r.mention(hello, "")
			r.waitBotMessages(thread, 1)
			// Turns of a thread run in order: once *help is answered, the
			// greeting's message is done with.
			r.reply("*help", thread)
			msgs := r.waitBotMessages(thread, 2)
			if r.model.Calls() != 0 {
				t.Fatalf("%q made %d model calls", hello, r.model.Calls())
			}
			if len(msgs) != 2 || !strings.Contains(text(msgs[0]), "Maren") {
				t.Fatalf("messages: %d, first %q", len(msgs), text(msgs[0]))
			}
		})
	}
}

// A first mention that names a menu item is dispatched at once through the
// shortcut: one model call, with the workflow preloaded.
func TestFirstMentionMenuItem(t *testing.T) {
	ctx := context.Background()
	for _, pick := range []string{"*brief", "2"} {
		t.Run(pick, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
			r.model.Enqueue(fakemodel.Reply{Text: "Which customers ask for it?"})
			thread, _ := r.mention(pick, "")
			r.waitFor("the answer", func() bool {
				for _, m := range r.botMessages(thread) {
					if strings.Contains(text(m), "Which customers ask") {
						return true
					}
				}
				for _, st := range r.slack.Streams() {
					if strings.Contains(st.Text, "Which customers ask") {
						return true
					}
				}
				return false
			})
			if r.model.Calls() != 1 {
				t.Fatalf("%s took %d model calls", pick, r.model.Calls())
			}
			if !strings.Contains(string(r.model.Requests()[0].Raw), "preload_workflow") {
				t.Fatal("the workflow was not preloaded")
			}
		})
	}
}
