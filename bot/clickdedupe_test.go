package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// TestMenuClickRedeliveredAnsweredOnce: the same menu click comes in
// twice (its payload again, in a new envelope, as when the ack was lost
// or the inbound journal is replayed after a crash): the click carries a
// dedupe key (its action_ts), so the workflow runs once.
func TestMenuClickRedeliveredAnsweredOnce(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	thread, _ := r.mention("", "")
	greet := r.waitBotMessages(thread, 1)[0]
	r.model.Enqueue(fakemodel.Reply{Text: "Let's write a brief."}, fakemodel.Reply{Text: "A second answer"})
	env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: greet.TS, ThreadTS: thread, ActionID: "menu:1", Value: "*brief"})
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	var orig []byte
	for _, e := range r.slack.Envelopes() {
		if e.ID == env {
			orig = e.JSON
		}
	}
	again := "again-" + env
	if r.slack.SendRaw([]byte(strings.Replace(string(orig), env, again, 1))) != again {
		t.Fatal("the copy has no envelope id")
	}
	if _, err := r.slack.WaitAck(again, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the answer", func() bool { return r.model.Calls() >= 1 })
	time.Sleep(300 * time.Millisecond) // room for a second turn
	if n := r.model.Calls(); n != 1 {
		t.Fatalf("%d model calls for one click, want 1", n)
	}
	streams := 0
	for _, s := range r.slack.Streams() {
		if s.ThreadTS == thread {
			streams++
		}
	}
	if streams != 1 {
		t.Fatalf("%d answers for one click", streams)
	}
}
