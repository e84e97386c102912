package bot_test

import (
	"context"
	"strings"
	"testing"

	"github.com/slack-go/slack/slackevents"

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
// the answer names it too. So does its greeting.
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
			for _, m := range msgs { // the greeting included
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

// TestGreetingPostedAsItsAgent: the greeting shows its agent as the
// author, as the answers after it do, so a shared thread does not read
// "agentbot: Hello, I'm Maren…" and then "Maren: …": the channel
// default's greeting and the picker's. Without chat:write.customize Slack
// ignores the author (fakeslack.ScopeCustomize) and the greeting still
// arrives.
func TestGreetingPostedAsItsAgent(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	thread, _ := r.mention("hello", "")
	greet := r.waitBotMessages(thread, 1)[0]
	has(t, text(greet), "Maren", "the greeting")
	if greet.As.Username != marenAuthor {
		t.Errorf("the greeting shows as %+v, want %q", greet.As, marenAuthor)
	}

	// The picker's choice greets under the agent's name too.
	const other = "C0OTHER"
	ts := r.slack.NextTS()
	r.slack.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: user, Channel: other,
		Text: "<@" + r.slack.BotUserID() + ">", TimeStamp: ts})
	picker := r.waitChannelMessages(other, ts, 1)[0]
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: other, MessageTS: picker.TS, ThreadTS: ts,
		ActionID: "pick:product-lead", Value: "product-lead"})
	msgs := r.waitChannelMessages(other, ts, 2)
	if msgs[0].As != (fakeslack.Author{}) {
		t.Errorf("the picker is the app's, not %+v", msgs[0].As)
	}
	if msgs[1].As.Username != marenAuthor {
		t.Errorf("the picked agent's greeting shows as %+v, want %q", msgs[1].As, marenAuthor)
	}

	// Without the scope the greeting arrives as the app's.
	bare := newRig(t, rigOpts{slack: []fakeslack.Option{fakeslack.WithScopes("chat:write")}})
	storage.SetChannelDefault(ctx, bare.st, bare.slack.TeamID(), channel, "product-lead")
	thread, _ = bare.mention("hello", "")
	greet = bare.waitBotMessages(thread, 1)[0]
	if !strings.Contains(text(greet), "Maren") || greet.As != (fakeslack.Author{}) {
		t.Fatalf("greeting without the scope = %q as %+v", text(greet), greet.As)
	}
}

// waitChannelMessages waits for n of the bot's messages in a thread of
// channel ch and returns them, oldest first.
func (r *rig) waitChannelMessages(ch, thread string, n int) []fakeslack.Message {
	r.t.Helper()
	var out []fakeslack.Message
	r.waitFor("bot messages", func() bool {
		out = out[:0]
		for _, m := range r.slack.ThreadMessages(ch, thread) {
			if m.Kind != fakeslack.KindUser {
				out = append(out, m)
			}
		}
		return len(out) >= n
	})
	return out
}
