package threadgap

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/bot/render"
)

// thread is a fake Slack thread of five people's messages, a join event
// and a message of the bot's, and a Checker on it.
type thread struct {
	fake *fakeslack.Server
	root string
	ts   []string // the people's messages, root first
}

func newThread(t *testing.T) *thread {
	fake := fakeslack.New(t)
	th := &thread{fake: fake, root: fake.NextTS()}
	send := func(ev map[string]any) string {
		ts := fake.NextTS()
		ev["type"], ev["channel"], ev["ts"] = "message", "C1", ts
		if len(th.ts) > 0 {
			ev["thread_ts"] = th.root
		} else {
			ts = th.root
			ev["ts"] = ts
		}
		fake.SendEvent(ev)
		return ts
	}
	for i := range 5 {
		th.ts = append(th.ts, send(map[string]any{"user": "U1", "text": "m"}))
		if i == 2 {
			send(map[string]any{"user": "U2", "subtype": "channel_join", "text": "joined"})
		}
	}
	return th
}

func (th *thread) checker(shared bool) *Checker {
	return New(Config{Slack: render.Slack{API: th.fake.Client()}, Shared: func() bool { return shared },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

func (th *thread) reads() int { return len(th.fake.CallsTo("conversations.replies")) }

// Alone, with nothing missed, a gap is known empty without asking Slack.
func TestNoGapWithoutSlack(t *testing.T) {
	th := newThread(t)
	c := th.checker(false)
	if got := c.Missing(context.Background(), "C1", th.root, th.ts[1], th.ts[4]); got != nil || th.reads() != 0 {
		t.Fatalf("missing %v after %d reads; want none and no read", got, th.reads())
	}
}

// A message this replica could not admit, or a shared store, makes the
// check read the gap from Slack: the people's messages strictly between
// the answered message and the one to answer, the bot's and events left
// out; a later check inside the same gap reads nothing more.
func TestGapReadOnceWhenItMayHoldAMessage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		shared bool
	}{{"missed", false}, {"shared", true}} {
		t.Run(tc.name, func(t *testing.T) {
			th := newThread(t)
			c := th.checker(tc.shared)
			if !tc.shared {
				c.Missed("C1", th.root, th.ts[2])
				if c.Missing(ctx, "C1", th.root, th.ts[2], th.ts[4]); th.reads() != 0 {
					t.Fatal("a miss outside the gap made the check read Slack")
				}
			}
			got := c.Missing(ctx, "C1", th.root, th.ts[0], th.ts[4])
			if len(got) != 3 || got[0].Timestamp != th.ts[1] || got[2].Timestamp != th.ts[3] || th.reads() != 1 {
				t.Fatalf("missing %v after %d reads; want messages 1..3 after one read", got, th.reads())
			}
			got = c.Missing(ctx, "C1", th.root, th.ts[2], th.ts[4])
			if len(got) != 1 || got[0].Timestamp != th.ts[3] || th.reads() != 1 {
				t.Fatalf("inside the read gap: %v after %d reads", got, th.reads())
			}
			if got := c.Missing(ctx, "C1", th.root, th.ts[4], th.ts[2]); got != nil {
				t.Fatalf("a message before the answered one has no gap: %v", got)
			}
		})
	}
}

// A rate-limited read is not waited out: the check finds nothing.
func TestGapReadRateLimitedFindsNothing(t *testing.T) {
	th := newThread(t)
	c := th.checker(true)
	th.fake.RateLimitNext("conversations.replies", 1, 30*time.Second)
	if got := c.Missing(context.Background(), "C1", th.root, th.ts[0], th.ts[4]); got != nil || th.reads() != 1 {
		t.Fatalf("rate limited: %v after %d reads", got, th.reads())
	}
}

// BenchmarkMissingNoGap is the gap check of a message whose thread cannot
// hold a message this replica was not given: no Slack call (slack-calls
// per op), a few map lookups.
func BenchmarkMissingNoGap(b *testing.B) {
	fake := fakeslack.New(b)
	c := New(Config{Slack: render.Slack{API: fake.Client()}, Shared: func() bool { return false }})
	c.Missed("C1", "1700000000.000100", "1700000000.000150") // another thread's miss
	ctx := context.Background()
	for b.Loop() {
		if c.Missing(ctx, "C2", "1700000000.000100", "1700000000.000200", "1700000000.000300") != nil {
			b.Fatal("a gap")
		}
	}
	b.ReportMetric(float64(len(fake.CallsTo("conversations.replies")))/float64(b.N), "slack-calls/op")
}

// BenchmarkMissingCached is the gap check of a message inside a gap read
// before (a shared store): no Slack call either.
func BenchmarkMissingCached(b *testing.B) {
	fake := fakeslack.New(b)
	root := fake.NextTS()
	fake.SendEvent(slackevents.MessageEvent{Type: "message", User: "U1", Channel: "C1", Text: "root", TimeStamp: root})
	var ts []string
	for range 20 {
		t := fake.NextTS()
		ts = append(ts, t)
		fake.SendEvent(slackevents.MessageEvent{Type: "message", User: "U1", Channel: "C1", Text: "m", TimeStamp: t, ThreadTimeStamp: root})
	}
	c := New(Config{Slack: render.Slack{API: fake.Client()}, Shared: func() bool { return true }})
	ctx := context.Background()
	c.Missing(ctx, "C1", root, ts[0], ts[19])
	reads := len(fake.CallsTo("conversations.replies"))
	for b.Loop() {
		if len(c.Missing(ctx, "C1", root, ts[17], ts[19])) != 1 {
			b.Fatal("the cached gap")
		}
	}
	b.ReportMetric(float64(len(fake.CallsTo("conversations.replies"))-reads)/float64(b.N), "slack-calls/op")
}
