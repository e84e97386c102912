package bot_test

import (
	"strings"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
)

// Messages written while the picker waits are all kept: after the pick the
// agent gets every one of them, not only the last.
func TestMessagesWaitingForThePickerAreKept(t *testing.T) {
	r := newRig(t, rigOpts{})
	thread, _ := r.mention("I want to plan a feature", "")
	picker := r.waitBotMessages(thread, 1)[0]
	r.reply("it is about reordering past carts", thread)
	r.waitFor("the second message to be handled", func() bool { return len(r.botMessages(thread)) >= 2 })
	r.model.Enqueue(fakemodel.Reply{Text: "Got it."})
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: picker.TS, ThreadTS: thread, ActionID: "pick:product-lead", Value: "product-lead"})
	r.waitFor("the answer", func() bool { return r.model.Calls() == 1 })
	last := r.model.Requests()[0].LastUserText()
	for _, want := range []string{"I want to plan a feature", "it is about reordering past carts"} {
		if !strings.Contains(last, want) {
			t.Errorf("the agent was not given %q; it got %q", want, last)
		}
	}
}
