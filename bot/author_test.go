package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// The agent's name shown as the author of its answer: Maren, Product
// Lead, with her icon (a Unicode emoji, so in the name).
const marenAuthor = "🧭 Maren, Product Lead"

// Each answer shows which agent speaks: posted or streamed, the message's
// author is the agent (chat:write.customize), and the context line under
// the answer names it too.
func TestAnswerPostedAndStreamedAsItsAgent(t *testing.T) {
	ctx := context.Background()
	for _, streaming := range []bool{true, false} {
		name := map[bool]string{true: "streamed", false: "posted"}[streaming]
		t.Run(name, func(t *testing.T) {
			r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.NoStreaming = !streaming }})
			storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
			r.model.Enqueue(fakemodel.Reply{Text: "What is the feature idea?"})
			thread, _ := r.mention("what do we build first?", "")
			r.waitText(thread, "What is the feature idea?")
			// The text shows while the stream is still open; the context line
			// comes with its stop.
			r.waitFor("the answer's context line", func() bool {
				msgs := r.botMessages(thread)
				return strings.Contains(string(msgs[len(msgs)-1].Blocks), "Maren")
			})
			msgs := r.botMessages(thread)
			if streaming {
				ss := r.slack.Streams()
				if len(ss) != 1 || ss[0].As.Username != marenAuthor {
					t.Fatalf("stream author = %+v, want %q", ss, marenAuthor)
				}
			}
			for _, m := range msgs {
				if strings.Contains(m.Text, "Here is what I can do") {
					continue // the greeting, the app's introduction of the agent
				}
				if m.As.Username != marenAuthor {
					t.Errorf("%s message %q shows as %+v, want %q", m.Kind, m.Text, m.As, marenAuthor)
				}
			}
		})
	}
}

// Where the workspace did not grant chat:write.customize, Slack ignores
// the author: the answer still arrives, and its context line names the
// agent.
func TestAnswerWithoutCustomizeScopeNamesItsAgent(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{
		mutate: func(c *bot.Config) { c.NoStreaming = true },
		slack:  []fakeslack.Option{fakeslack.WithScopes("chat:write")},
	})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "What is the feature idea?"})
	thread, _ := r.mention("what do we build first?", "")
	r.waitText(thread, "What is the feature idea?")
	msgs := r.botMessages(thread)
	answer := msgs[len(msgs)-1]
	if answer.As != (fakeslack.Author{}) {
		t.Fatalf("without the scope Slack shows the app, not %+v", answer.As)
	}
	if !strings.Contains(string(answer.Blocks), "Maren, Product Lead") {
		t.Fatalf("the answer's context line does not name the agent: %s", answer.Blocks)
	}
}
