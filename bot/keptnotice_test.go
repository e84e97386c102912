package bot_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// refusingStore is the engine's store, refusing the saves refuse picks.
type refusingStore struct {
	engine.Store
	refuse  func(*transcript.Session) bool
	refused atomic.Int32
}

func (s *refusingStore) SaveSession(ctx context.Context, rec *transcript.Session) error {
	if s.refuse(rec) {
		s.refused.Add(1)
		return errConnReset
	}
	return s.Store.SaveSession(ctx, rec)
}

// errConnReset is the error a save gets when the database connection is
// reset under it (as pgx reports it).
var errConnReset = &netError{"write failed: write tcp 127.0.0.1:41814->127.0.0.1:5432: write: connection reset by peer"}

type netError struct{ s string }

func (e *netError) Error() string { return e.s }

// TestFirstMessageKeptWhenItsFirstSaveFails: the database connection is
// reset as a thread's first turn stores the first message (the agent was
// activated and greeted just before). The person is told once that the
// database failed and the message is kept; the message stays queued, is
// answered once when the store answers again (before the thread's second
// message), and is in the transcript once; the notice then says the
// answer is below. Before, the notice was recorded as the turn's answer,
// so the retry skipped the message: it was never answered, and the
// transcript started at the second message.
func TestFirstMessageKeptWhenItsFirstSaveFails(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		t.Run(map[bool]string{true: "streamed", false: "posted"}[streaming], func(t *testing.T) { firstMessageKept(t, streaming) })
	}
}

// firstMessageKept plays TestFirstMessageKeptWhenItsFirstSaveFails with
// answers streamed or posted: the posted answer takes the notice's place;
// a streamed one comes below it, and the notice says so.
func firstMessageKept(t *testing.T, streaming bool) {
	ctx := context.Background()
	rs := &refusingStore{}
	var down atomic.Bool
	down.Store(true)
	rs.refuse = func(rec *transcript.Session) bool {
		return down.Load() && userCount(rec, "q1") > 0 && rs.refused.Load() < 3
	}
	r := newRig(t, rigOpts{engine: func(c *engine.Config) { rs.Store = c.Store; c.Store = rs },
		mutate: func(c *bot.Config) { c.NoStreaming = !streaming }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ANSWER[" + req.LastUserText() + "]"}
	})
	thread, _ := r.mention("q1", "")
	r.waitFor("the refused save", func() bool { return rs.refused.Load() > 0 })
	r.waitFor("the notice", func() bool { return noticeIn(r, thread) != "" })
	down.Store(false)
	r.reply("q2", thread)
	r.waitFor("both answers", func() bool { return answerIn(r, thread, "q1") >= 0 && answerIn(r, thread, "q2") >= 0 })
	time.Sleep(300 * time.Millisecond) // a second answer would come now
	for _, q := range []string{"q1", "q2"} {
		if got := answersIn(r, thread, q); got != 1 {
			t.Fatalf("%q answered %d times, want 1: %q", q, got, texts(r, thread))
		}
	}
	if answerIn(r, thread, "q1") > answerIn(r, thread, "q2") {
		t.Fatalf("q2 answered before q1: %q", texts(r, thread))
	}
	s, err := r.st.FindSession(ctx, r.slack.TeamID()+"/"+channel+"/"+thread)
	if err != nil || s == nil {
		t.Fatalf("session: %v", err)
	}
	for _, q := range []string{"q1", "q2"} {
		if n := userCount(s, q); n != 1 {
			t.Fatalf("the transcript holds %q %d times, want 1", q, n)
		}
	}
	notices := 0
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "database") {
			notices++
			if !strings.Contains(text(m), "answered below") {
				t.Fatalf("the notice still says the message waits: %q", texts(r, thread))
			}
		}
	}
	if want := map[bool]int{true: 1, false: 0}[streaming]; notices != want {
		t.Fatalf("%d notices about the database, want %d: %q", notices, want, texts(r, thread))
	}
}

// noticeIn is the text of the bot's notice that the database failed in
// thread, or "".
func noticeIn(r *rig, thread string) string {
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "⚠️") && strings.Contains(text(m), "database") {
			return text(m)
		}
	}
	return ""
}

// texts is what the bot said in thread.
func texts(r *rig, thread string) []string {
	var out []string
	for _, m := range r.botMessages(thread) {
		out = append(out, text(m))
	}
	return out
}

// flakyDefaults is the bot's store, failing the read of a channel's
// default agent while fail is above zero.
type flakyDefaults struct {
	bot.Store
	fail atomic.Int32
}

func (f *flakyDefaults) Channel(ctx context.Context, team, channel string) (storage.ChannelSettings, error) {
	if f.fail.Add(-1) >= 0 {
		return storage.ChannelSettings{}, errConnReset
	}
	return f.Store.Channel(ctx, team, channel)
}

// TestChannelDefaultUnreadableKeepsTheMessage: the read of the channel's
// default agent fails as a thread's first message is handled. The message
// stays queued and is answered by the default agent once the store
// answers; before, the failed read counted as "no default", so the
// message went to the picker, and a channel with a default showed one.
func TestChannelDefaultUnreadableKeepsTheMessage(t *testing.T) {
	ctx := context.Background()
	fd := &flakyDefaults{}
	fd.fail.Store(2)
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { fd.Store = c.Store; c.Store = fd }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ANSWER[" + req.LastUserText() + "]"}
	})
	thread, _ := r.mention("q1", "")
	r.waitFor("the answer", func() bool { return answerIn(r, thread, "q1") >= 0 })
	if fd.fail.Load() >= 0 {
		t.Fatalf("the default was read %d times, want the failures and a success", 2-fd.fail.Load())
	}
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "Which agent should help") {
			t.Fatalf("the picker was posted in a channel with a default: %q", texts(r, thread))
		}
	}
}

// TestFirstMessageBlipShowsNoNotice: the first save of a thread's first
// turn fails once (a connection reset the next run outlasts): the message
// stays queued and is answered once, 200 ms later, and the thread shows
// no notice about the database, which was back by then.
func TestFirstMessageBlipShowsNoNotice(t *testing.T) {
	ctx := context.Background()
	rs := &refusingStore{}
	rs.refuse = func(rec *transcript.Session) bool { return userCount(rec, "q1") > 0 && rs.refused.Load() < 1 }
	r := newRig(t, rigOpts{engine: func(c *engine.Config) { rs.Store = c.Store; c.Store = rs }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ANSWER[" + req.LastUserText() + "]"}
	})
	thread, _ := r.mention("q1", "")
	r.waitFor("the answer", func() bool { return answerIn(r, thread, "q1") >= 0 })
	time.Sleep(300 * time.Millisecond) // a second answer would come now
	if rs.refused.Load() != 1 {
		t.Fatalf("%d saves refused, want 1", rs.refused.Load())
	}
	if got := answersIn(r, thread, "q1"); got != 1 {
		t.Fatalf("q1 answered %d times: %q", got, texts(r, thread))
	}
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "database") {
			t.Fatalf("a blip the retry outlasted showed a notice: %q", texts(r, thread))
		}
	}
}
