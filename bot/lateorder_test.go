package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// TestLateMessageAnsweredInOrderAndNamed: messages queued behind a running
// turn are answered in the order people sent them (Slack's ts), not in the
// order they arrived; a message that arrives after a later one was
// answered (Slack delivered it again after a fault) is answered with a
// note that says which message it answers.
func TestLateMessageAnsweredInOrderAndNamed(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ANSWER[" + req.LastUserText() + "]", Delay: 300 * time.Millisecond}
	})
	thread, _ := r.mention("q1", "")
	tsLate, ts2, ts3 := r.slack.NextTS(), r.slack.NextTS(), r.slack.NextTS()
	send := func(ts, text string) {
		r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: user, Channel: channel, ChannelType: "channel",
			Text: text, TimeStamp: ts, ThreadTimeStamp: thread})
	}
	r.waitFor("the first turn", func() bool { return r.model.Calls() == 1 })
	send(ts3, "q3") // arrives first, sent later
	send(ts2, "q2")
	answerAt := func(q string) int {
		for i, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "ANSWER["+q+"]") {
				return i
			}
		}
		return -1
	}
	r.waitFor("the answers", func() bool { return answerAt("q3") >= 0 })
	if a1, a2, a3 := answerAt("q1"), answerAt("q2"), answerAt("q3"); !(a1 < a2 && a2 < a3) {
		t.Fatalf("answers at %d, %d, %d: not in the order sent", a1, a2, a3)
	}
	send(tsLate, "q-late")
	r.waitFor("the late answer", func() bool { return answerAt("q-late") >= 0 })
	late := text(r.botMessages(thread)[answerAt("q-late")])
	if !strings.Contains(late, "Answering an earlier message") || !strings.Contains(late, "q-late") {
		t.Fatalf("the late answer does not say which message it answers: %q", late)
	}
	if strings.Contains(text(r.botMessages(thread)[answerAt("q3")]), "earlier message") {
		t.Fatal("an answer in order carries the late note")
	}
}

// TestLateClickAnsweredInOrder: a menu click and a message queued behind
// a running turn are answered in the order the person made them, by
// Slack's clock (the click's action_ts, the message's ts), though the
// click arrived after the message.
func TestLateClickAnsweredInOrder(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		first, _, _ := strings.Cut(req.LastUserText(), "\n")
		return fakemodel.Reply{Text: "ANSWER[" + first + "]", Delay: 300 * time.Millisecond}
	})
	thread, _ := r.mention("q1", "")
	greet := r.waitBotMessages(thread, 1)[0]
	tsClick, ts3 := r.slack.NextTS(), r.slack.NextTS()
	r.waitFor("the first turn", func() bool { return r.model.Calls() == 1 })
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: user, Channel: channel, ChannelType: "channel",
		Text: "q3", TimeStamp: ts3, ThreadTimeStamp: thread})
	r.waitFor("q3 queued", func() bool {
		q, err := r.st.Pending(ctx, r.slack.TeamID()+"/"+channel+"/"+thread)
		return err == nil && len(q) >= 2
	})
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: greet.TS, ThreadTS: thread,
		ActionID: "menu:2", Value: "*brief", ActionTS: tsClick})
	answerAt := func(q string) int {
		for i, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "ANSWER["+q) {
				return i
			}
		}
		return -1
	}
	r.waitFor("the answers", func() bool { return answerAt("q3") >= 0 && answerAt("*brief") >= 0 })
	if click, a3 := answerAt("*brief"), answerAt("q3"); click > a3 {
		t.Fatalf("the click (answer %d) was answered after the later message (answer %d): %q", click, a3, texts(r, thread))
	}
}
