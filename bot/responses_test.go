package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/model"
)

// A session on the Responses API through Slack: a menu pick that starts a
// workflow with a streamed answer, a turn with two parallel tool calls, a
// restart (a new bot and engine on the same store) and a third turn. The
// encrypted reasoning items go back to the model byte for byte, across the
// restart, and never reach Slack.
func TestResponsesSessionThroughSlack(t *testing.T) {
	fm := fakemodel.NewTB(t)
	r := newRig(t, rigOpts{engine: func(c *engine.Config) {
		c.Model = model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "gpt-5.6-terra", API: model.APIResponses,
			Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	}})
	thread, _ := r.mention("", "")
	picker := r.waitBotMessages(thread, 1)[0]
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: picker.TS, ThreadTS: thread, ActionID: "pick:product-lead", Value: "product-lead"})
	greet := r.waitBotMessages(thread, 2)[1]

	fm.Enqueue(fakemodel.Reply{Text: "Let's write a brief. What's the feature idea?", Chunks: 4})
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: greet.TS, ThreadTS: thread, ActionID: "menu:1", Value: "*brief"})
	r.waitFor("the stream to stop", func() bool {
		ss := r.slack.Streams()
		return len(ss) == 1 && ss[0].Stopped
	})
	has(t, r.slack.Streams()[0].Text, "What's the feature idea?", "streamed answer")

	fm.Enqueue(
		fakemodel.Reply{Text: "Checking two folders.", ToolCalls: []fakemodel.ToolCall{
			call("list_files", map[string]string{"path": "/outputs"}),
			call("list_files", map[string]string{"path": "/project"}),
		}},
		fakemodel.Reply{Text: "Both checked. Who is it for?"},
	)
	r.reply("One-click reorder of a past cart", thread)
	r.waitText(thread, "Who is it for?")
	if got := len(fakemodel.ReasoningSent(fm.Requests()[2])); got != 2 {
		t.Errorf("the tool round sent %d reasoning items back, want 2", got)
	}

	r.restart()
	fm.Enqueue(fakemodel.Reply{Text: "Returning shoppers, noted."})
	r.reply("Returning shoppers", thread)
	r.waitText(thread, "Returning shoppers, noted.")

	reqs := fm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4", len(reqs))
	}
	issued := fm.IssuedReasoning()
	sent := fakemodel.ReasoningSent(reqs[3])
	if len(sent) != 3 {
		t.Fatalf("after the restart, %d reasoning items were sent back, want 3", len(sent))
	}
	for _, s := range sent {
		if s.EncryptedContent == "" || s.EncryptedContent != issued[s.ID] {
			t.Errorf("reasoning item %s not sent back byte for byte", s.ID)
		}
	}
	for _, q := range reqs {
		if !fakemodel.IsResponses(q) {
			t.Errorf("request %d went to %s", q.N, q.Path)
		}
	}
	if strings.Contains(r.everything(), "gAAAAA") {
		t.Error("encrypted reasoning reached Slack")
	}
	kept := 0
	for _, m := range r.session(thread).Messages {
		kept += len(m.ReasoningItems)
	}
	if kept != 4 { // one per answer, the last included
		t.Errorf("the stored session keeps %d reasoning items, want 4", kept)
	}
}
