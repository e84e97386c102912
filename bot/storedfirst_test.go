package bot_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// TestStoredMessageAnsweredBeforeLateOne: a turn stores its message and
// then cannot store more (the database went down), so its item stays
// queued; an earlier message of the thread then arrives late and goes
// before it in the queue. The stored message is answered first, where it
// stands in the transcript, and the late one after it, with the note that
// it came late: each message is in the transcript once, and answered once.
func TestStoredMessageAnsweredBeforeLateOne(t *testing.T) {
	ctx := context.Background()
	var down atomic.Bool
	ds := &refusingStore{refuse: func(*transcript.Session) bool { return down.Load() }} // keptnotice_test.go
	r := newRig(t, rigOpts{engine: func(c *engine.Config) { ds.Store = c.Store; c.Store = ds }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	var mu sync.Mutex
	tried := map[string]int{}
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		q := req.LastUserText()
		mu.Lock()
		defer mu.Unlock()
		tried[q]++
		if q == "q-later" && tried[q] == 1 {
			down.Store(true) // its message is stored; the rest is not
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"x"}`}}}
		}
		return fakemodel.Reply{Text: "ANSWER[" + q + "]"}
	})
	thread, _ := r.mention("q0", "")
	r.waitFor("the first answer", func() bool { return answerIn(r, thread, "q0") >= 0 })
	tsEarly, tsLater := r.slack.NextTS(), r.slack.NextTS()
	send := func(ts, text string) {
		r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: user, Channel: channel, ChannelType: "channel",
			Text: text, TimeStamp: ts, ThreadTimeStamp: thread})
	}
	send(tsLater, "q-later")
	r.waitFor("the failed save", func() bool { return ds.refused.Load() > 0 })
	key := r.slack.TeamID() + "/" + channel + "/" + thread
	send(tsEarly, "q-early") // delivered again after the fault: late
	r.waitFor("the late message queued first", func() bool {
		_, payload, ok, err := storage.Next(ctx, r.st, key)
		return err == nil && ok && strings.Contains(string(payload), "q-early")
	})
	down.Store(false)
	r.waitFor("both answers", func() bool { return answerIn(r, thread, "q-early") >= 0 && answerIn(r, thread, "q-later") >= 0 })
	time.Sleep(300 * time.Millisecond) // a second answer would come now
	s, err := r.st.FindSession(ctx, key)
	if err != nil || s == nil {
		t.Fatalf("session %s: %v", key, err)
	}
	for _, q := range []string{"q0", "q-later", "q-early"} {
		if n := userCount(s, q); n != 1 {
			for i, m := range s.Messages {
				t.Logf("transcript %d %s %q", i, m.Role, m.Content[:min(60, len(m.Content))])
			}
			t.Fatalf("the transcript holds %q %d times, want 1", q, n)
		}
		if got := answersIn(r, thread, q); got != 1 {
			t.Fatalf("%q answered %d times, want 1", q, got)
		}
	}
	if late := text(r.botMessages(thread)[answerIn(r, thread, "q-early")]); !strings.Contains(late, "Answering an earlier message") {
		t.Fatalf("the late message's answer, after the later one's, does not say it came late: %q", late)
	}
}

// userCount counts the user messages of s that say q.
func userCount(s *transcript.Session, q string) int {
	n := 0
	for _, m := range s.Messages {
		if m.Role == transcript.RoleUser && m.Content == q {
			n++
		}
	}
	return n
}

// answerIn is the index of the bot's answer to q in thread, or -1.
func answerIn(r *rig, thread, q string) int {
	for i, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "ANSWER["+q+"]") {
			return i
		}
	}
	return -1
}

// answersIn counts the bot's answers to q in thread.
func answersIn(r *rig, thread, q string) int {
	n := 0
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "ANSWER["+q+"]") {
			n++
		}
	}
	return n
}
