package bot_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// heldStore is a replica's store whose admissions wait while it is held:
// a database that stalls under one replica only.
type heldStore struct {
	*replicaStore
	hold atomic.Pointer[chan struct{}]
}

func (s *heldStore) Admit(ctx context.Context, order int64, keys []string, ttl time.Duration, key string, payload []byte) (<-chan error, <-chan storage.Admission) {
	if h := s.hold.Load(); h != nil {
		<-*h
	}
	return s.replicaStore.Admit(ctx, order, keys, ttl, key, payload)
}

// TestOrderUnderAStalledReplica: a reply given to a replica whose store
// stalls is not acked there, and Slack delivers it again only later; the
// next reply, given to another replica, is not answered before it: that
// replica reads the thread's gap from Slack (conversations.replies shows
// the stalled reply in its place), admits it and answers it first. Every
// reply is answered once, in the order people wrote them, without the
// note for a message that came late; the stalled replica's admission and
// Slack's redelivery are duplicates.
func TestOrderUnderAStalledReplica(t *testing.T) {
	c := newCluster(t)
	c.bot = func(cfg *bot.Config) { cfg.SharedStore = true }
	held := &heldStore{}
	a := c.startWrapped("replica-a", 5*time.Second, func(s *replicaStore) bot.Store { held.replicaStore = s; return held })
	b := c.start("replica-b", 5*time.Second)

	thread, _ := c.mention(b.conn, "q1", "")
	c.waitFor("q1's answer", func() bool { return c.count(thread, "ANSWER[q1]") == 1 })

	release := make(chan struct{})
	held.hold.Store(&release)
	reply := func(conn int, text string) (string, string) {
		ts := c.slack.NextTS()
		env := c.slack.SendEventWith(slackevents.MessageEvent{Type: "message", User: user, Channel: channel, ChannelType: "channel",
			Text: text, TimeStamp: ts, ThreadTimeStamp: thread}, fakeslack.EventOptions{Conn: conn})
		return ts, env
	}
	_, env2 := reply(a.conn, "q2") // the stalled replica's: not acked
	reply(b.conn, "q3")
	c.waitFor("q3's answer", func() bool { return c.count(thread, "ANSWER[q3]") == 1 })
	if _, err := c.slack.WaitAck(env2, 10*time.Millisecond); err == nil {
		t.Fatal("the stalled replica acked q2")
	}
	close(release)
	again, err := c.slack.RedeliverTo(env2, "timeout", b.conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{env2, again} {
		if _, err := c.slack.WaitAck(env, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	c.waitFor("both deliveries of q2 dropped as duplicates", func() bool { return a.dups.Load() >= 1 && b.dups.Load() >= 1 })
	c.idle()
	var order []string
	for _, m := range c.slack.ThreadMessages(channel, thread) {
		if m.Kind == fakeslack.KindUser {
			continue
		}
		if strings.Contains(text(m), "earlier message") {
			t.Errorf("an answer carries the late note: %q", text(m))
		}
		for _, q := range []string{"q1", "q2", "q3"} {
			if strings.Contains(text(m), "ANSWER["+q+"]") {
				order = append(order, q)
			}
		}
	}
	if strings.Join(order, " ") != "q1 q2 q3" {
		t.Fatalf("answers in the thread: %v, want q1 q2 q3, each once", order)
	}
}

// failOnce is a bolt store whose admission of the next item whose
// payload holds fail fails, as a store that refuses one write.
type failOnce struct {
	*bolt.Store
	fail atomic.Pointer[string]
}

func (s *failOnce) Admit(ctx context.Context, order int64, keys []string, ttl time.Duration, key string, payload []byte) (<-chan error, <-chan storage.Admission) {
	if f := s.fail.Load(); f != nil && strings.Contains(string(payload), *f) && s.fail.CompareAndSwap(f, nil) {
		err := errors.New("injected admission failure")
		journaled, done := make(chan error, 1), make(chan storage.Admission, 1)
		journaled <- err
		done <- storage.Admission{Err: err}
		return journaled, done
	}
	return s.Store.Admit(ctx, order, keys, ttl, key, payload)
}

// TestOrderAfterAFailedAdmission: one process, one connection: a reply
// this replica could not admit (not acked: Slack delivers it again later)
// is read from Slack before the next reply is answered, and answered
// first; Slack's redelivery is then a duplicate. Without such a miss the
// check asks Slack nothing.
func TestOrderAfterAFailedAdmission(t *testing.T) {
	fs := &failOnce{}
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		fs.Store = c.Store.(*bolt.Store)
		c.Store = fs
	}})
	storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ANSWER[" + req.LastUserText() + "]"}
	})
	thread, _ := r.mention("q1", "")
	r.waitText(thread, "ANSWER[q1]")
	r.reply("q1b", thread)
	r.waitText(thread, "ANSWER[q1b]")
	if n := len(r.slack.CallsTo("conversations.replies")); n != 0 {
		t.Fatalf("with nothing missed the gap check read Slack %d times", n)
	}
	q2 := "q2"
	fs.fail.Store(&q2)
	_, env2 := r.reply("q2", thread)
	r.waitFor("q2's refusal", func() bool { return fs.fail.Load() == nil })
	r.reply("q3", thread)
	r.waitText(thread, "ANSWER[q3]")
	again, err := r.slack.Redeliver(env2, "timeout")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.slack.WaitAck(again, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range r.botMessages(thread) {
		for _, q := range []string{"q1]", "q1b]", "q2]", "q3]"} {
			if strings.Contains(text(m), "ANSWER["+q) {
				order = append(order, strings.TrimSuffix(q, "]"))
			}
		}
		if strings.Contains(text(m), "earlier message") {
			t.Errorf("an answer carries the late note: %q", text(m))
		}
	}
	if strings.Join(order, " ") != "q1 q1b q2 q3" {
		t.Fatalf("answers: %v, want q1 q1b q2 q3, each once", order)
	}
}
