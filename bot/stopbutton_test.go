package bot_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// hasStop reports whether a message shows the Stop button.
func hasStop(m fakeslack.Message) bool {
	return len(m.Blocks) > 0 && strings.Contains(string(m.Blocks), `"action_id":"stop"`)
}

// continueAnswer is what the model says to the message after a stop.
const continueAnswer = "Picking up where we left off."

// lateModel answers the message after a stop with continueAnswer and
// anything else with "LATE ANSWER", which must never reach the thread.
func lateModel(r *rig) {
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		if strings.Contains(req.LastUserText(), "go on") {
			return fakemodel.Reply{Text: continueAnswer}
		}
		return fakemodel.Reply{Text: "LATE ANSWER"}
	})
}

// checkStopped checks a stopped turn of thread: the thread says who stopped
// it, no late answer arrives, the session shows active again, the
// transcript is valid and records the stop, and the next message continues
// from there in one model call whose history holds the stop.
func checkStopped(t *testing.T, r *rig, thread, by string, calls int) {
	ctx := context.Background()
	t.Helper()
	r.waitText(thread, "Stopped by <@"+by+">")
	time.Sleep(300 * time.Millisecond) // a late answer would arrive now
	if n := r.model.Calls(); n != calls {
		t.Fatalf("model calls after the stop = %d, want %d", n, calls)
	}
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "LATE ANSWER") || strings.Contains(text(m), "⚠️") {
			t.Fatalf("a stopped turn posted %q", text(m))
		}
		if hasStop(m) {
			t.Fatalf("a Stop button is left after the turn: %q", text(m))
		}
	}
	var last string
	for _, st := range r.slack.AgentSessionStatuses() {
		if st.Channel == channel && st.ThreadTS == thread {
			last = st.Status
		}
	}
	if last != "active" {
		t.Fatalf("the agent session ends %q, want active", last)
	}
	sess, err := r.st.FindSession(ctx, r.slack.TeamID()+"/"+channel+"/"+thread)
	if err != nil || sess == nil {
		t.Fatal(err)
	}
	if err := fakemodel.ValidateTranscript(sess.Messages); err != nil {
		t.Fatalf("the stored transcript is invalid: %v", err)
	}
	if last := sess.Messages[len(sess.Messages)-1]; !strings.Contains(last.Content, "The user stopped this turn") {
		t.Fatalf("the transcript does not end with the stop: %+v", last)
	}
	r.reply("go on with the problem statement", thread)
	r.waitText(thread, continueAnswer)
	if n := r.model.Calls(); n != calls+1 {
		t.Fatalf("the next message took %d model calls, want 1", n-calls)
	}
	next := r.model.Requests()[calls].Messages
	if err := fakemodel.ValidateHistory(next); err != nil {
		t.Fatalf("the next request is invalid: %v", err)
	}
	var sawStop bool
	for _, m := range next {
		sawStop = sawStop || strings.Contains(m.Content, "The user stopped this turn")
	}
	if !sawStop {
		t.Fatal("the next request lacks the stop")
	}
}

// Slack's stop button (agent_session_stopped) while a tool call runs: the
// tool is held until the stop has landed, the turn ends without another
// model call, and the halted stream is not continued in a new one.
func TestStopDuringToolCall(t *testing.T) {
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	r := newRig(t, rigOpts{engine: func(c *engine.Config) {
		c.OnToolRecord = func(transcript.ToolRecord) {
			once.Do(func() { close(entered) })
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			}
		}
	}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	lateModel(r)
	r.model.Enqueue(fakemodel.Reply{Text: "Let me look. ", ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}})
	thread, _ := r.mention("draft the brief", "")
	select {
	case <-entered:
	case <-time.After(15 * time.Second):
		t.Fatal("the tool call never ran")
	}
	env := r.slack.SendAgentSessionStopped(channel, thread, user)
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	close(release)
	checkStopped(t, r, thread, user, 1)
	ss := r.slack.Streams()
	if len(ss) != 2 || !ss[0].Halted || !strings.Contains(ss[0].Text, "Let me look.") {
		t.Fatalf("streams = %+v; want the halted one with what was said, then the next answer's", ss)
	}
}

// The Stop button a channel thread shows once a turn uses tools, clicked by
// another person in the thread between two model calls (the second is
// held); the button's message becomes the note.
func TestStopButtonBetweenModelCalls(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	lateModel(r)
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}},
		fakemodel.Reply{Text: "LATE ANSWER", Delay: 5 * time.Second},
	)
	thread, _ := r.mention("draft the brief", "")
	r.waitFor("the second model call", func() bool { return r.model.Calls() == 2 })
	var stop fakeslack.Message
	r.waitFor("the Stop button", func() bool {
		for _, m := range r.botMessages(thread) {
			if hasStop(m) {
				stop = m
				return true
			}
		}
		return false
	})
	const bobby = "U0BOBBY"
	env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: bobby, ChannelID: channel, MessageTS: stop.TS, ThreadTS: thread,
		ActionID: "stop", Value: "stop"})
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	checkStopped(t, r, thread, bobby, 2)
	if m, _ := r.slack.Message(channel, stop.TS); !strings.Contains(m.Text, "Stopped by") {
		t.Fatalf("the Stop button's message = %q, want the note", m.Text)
	}
}

// A Stop button shows only in channel threads while a turn runs; a quick
// answer without tools shows none, and a turn with tools loses it at the
// end.
func TestStopButtonGoesAwayAfterTheTurn(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "Quick answer."})
	thread, _ := r.mention("quick question", "")
	r.waitText(thread, "Quick answer.")
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}},
		fakemodel.Reply{Text: "Read it.", Delay: 300 * time.Millisecond},
	)
	r.reply("read the config", thread)
	r.waitFor("the answer", func() bool {
		ss := r.slack.Streams()
		return len(ss) == 2 && ss[1].Stopped
	})
	r.waitFor("the Stop button to go", func() bool {
		for _, m := range r.botMessages(thread) {
			if hasStop(m) {
				return false
			}
		}
		return true
	})
	var posted, deleted int
	for _, m := range r.slack.Messages() {
		if m.ThreadTS != thread {
			continue
		}
		if m.Kind == fakeslack.KindPost && hasStop(m) {
			posted++
		}
		if m.Kind == fakeslack.KindDelete {
			deleted++
		}
	}
	if posted != 1 || deleted != 1 {
		t.Fatalf("%d Stop buttons posted and %d messages deleted, want 1 and 1 (for the turn with a tool)", posted, deleted)
	}
}

// "@agentbot stop" arrives twice, as app_mention and as message.channels
// (one message, one ts): it stops the turn once, and the copy that comes
// after the turn ended never reaches the agent as a message.
func TestStopMessageDeliveredTwice(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	lateModel(r)
	r.model.Enqueue(fakemodel.Reply{Text: "LATE ANSWER", Delay: 5 * time.Second})
	thread, _ := r.mention("draft the brief", "")
	r.waitFor("the model call", func() bool { return r.model.Calls() == 1 })
	ts := r.slack.NextTS()
	r.slack.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: user, Channel: channel,
		Text: "<@" + r.slack.BotUserID() + "> stop", TimeStamp: ts, ThreadTimeStamp: thread})
	r.waitText(thread, "Stopped by <@"+user+">")
	env := r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: user, Channel: channel, ChannelType: "channel",
		Text: "<@" + r.slack.BotUserID() + "> stop", TimeStamp: ts, ThreadTimeStamp: thread})
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	checkStopped(t, r, thread, user, 1)
}
