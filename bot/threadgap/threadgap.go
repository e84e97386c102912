// Package threadgap finds a thread's unanswered gap: the people's
// messages posted after the last message a turn answered and before the
// one about to be answered, that this replica may never have been
// given. Slack spreads a workspace's events over every Socket Mode
// connection of the app; a message sent to a replica that stalls (its
// store held, its process frozen) is not acked, and Slack delivers it
// again only later, after a later message of the thread was answered
// elsewhere. conversations.replies shows it in its place all along, so
// the bot reads the gap from there before it answers, admits what it
// finds, and answers it first.
//
// The check asks Slack only when the gap may hold such a message, which a
// replica knows without asking: when other replicas may have been given
// the thread's messages (Config.Shared: a shared store, or more than one
// Socket Mode connection), or when this replica was given one of them and
// could not admit it (Missed). Otherwise, and when an earlier read of the
// thread covers the gap, the check is a few map lookups. A read is
// bounded to the gap (oldest and latest), cached per thread, and never
// waits out a rate limit: a check Slack refuses finds nothing, and the
// message that truly arrives late keeps the note that says so.
package threadgap

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/slack-go/slack"

	"agentbot/bot/cache"
	"agentbot/bot/render"
	"agentbot/bot/webapi"
	"agentbot/storage"
)

// Config configures a Checker.
type Config struct {
	// Slack reads the gap (conversations.replies).
	Slack render.Slack
	// Shared reports whether other replicas may be given this thread's
	// messages; nil means never.
	Shared func() bool
	Log    *slog.Logger
}

// Checker checks threads' gaps; it is safe for concurrent use.
type Checker struct {
	cfg Config
	// reads are the last read of each thread's gap (bounded).
	reads cache.Map[string, window]
	// missed are, per thread, the messages this replica was given and
	// could not admit (Missed), newest last.
	missedMu sync.Mutex
	missed   cache.Map[string, []string]
}

// window is one read of a thread's messages strictly between oldest and
// latest: the people's messages, oldest first.
type window struct {
	oldest, latest string
	msgs           []slack.Message
}

// maxThreads bounds the threads whose reads and misses a Checker keeps.
const maxThreads = 2000

// maxMissed bounds the messages Missed keeps per thread.
const maxMissed = 16

// New returns a Checker of cfg.
func New(cfg Config) *Checker {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	c := &Checker{cfg: cfg}
	c.reads.Max, c.missed.Max = maxThreads, maxThreads
	return c
}

// threadKey names a thread of a channel.
func threadKey(channel, thread string) string { return channel + "/" + thread }

// Missed notes that message ts of a thread reached this replica and could
// not be admitted (Slack delivers it again, later): until a turn answers
// past it, the thread's gap checks ask Slack.
func (c *Checker) Missed(channel, thread, ts string) {
	if ts == "" {
		return
	}
	k := threadKey(channel, thread)
	c.missedMu.Lock()
	defer c.missedMu.Unlock()
	old, _ := c.missed.Get(k)
	if slices.Contains(old, ts) {
		return
	}
	list := append(slices.Clone(old), ts)
	c.missed.Put(k, list[max(0, len(list)-maxMissed):])
}

// Missing returns the people's messages of the thread posted strictly
// between answered (the last message a turn answered) and ts (the one
// about to be answered), oldest first, when the gap may hold a message
// this replica was not given (see the package doc); none, without a Slack
// call, when it cannot, or when answered is unknown ("") or not before
// ts. The caller admits them (what was admitted already is a duplicate).
// A read Slack refuses is logged and finds nothing.
func (c *Checker) Missing(ctx context.Context, channel, thread, answered, ts string) []slack.Message {
	if answered == "" || !before(answered, ts) {
		return nil
	}
	k := threadKey(channel, thread)
	w, ok := c.reads.Get(k)
	if covered := ok && !before(answered, w.oldest) && !before(w.latest, ts); !covered {
		if !c.mayHold(k, answered, ts) {
			return nil
		}
		msgs, err := webapi.RepliesBetween(ctx, c.cfg.Slack, channel, thread, answered, ts)
		if err != nil {
			c.cfg.Log.Warn("read the thread's unanswered gap; answering without it", "channel", channel, "err", err)
			return nil
		}
		w = window{oldest: answered, latest: ts, msgs: c.people(msgs)}
		c.reads.Put(k, w)
	}
	var out []slack.Message
	for _, m := range w.msgs {
		if before(answered, m.Timestamp) && before(m.Timestamp, ts) {
			out = append(out, m)
		}
	}
	return out
}

// mayHold reports whether the gap (answered, ts) of thread k may hold a
// message this replica was not given: other replicas may have been, or
// one it was given there could not be admitted.
func (c *Checker) mayHold(k, answered, ts string) bool {
	if c.cfg.Shared != nil && c.cfg.Shared() {
		return true
	}
	c.missedMu.Lock()
	missed, _ := c.missed.Get(k)
	c.missedMu.Unlock()
	return slices.ContainsFunc(missed, func(m string) bool { return before(answered, m) && before(m, ts) })
}

// people keeps the messages that carry a person's words: not a bot's
// (the bot's own carry its bot_id) nor an event (webapi.PersonSubtype),
// oldest first.
func (c *Checker) people(msgs []slack.Message) []slack.Message {
	var out []slack.Message
	for _, m := range msgs {
		if m.BotID != "" || m.User == "" || !webapi.PersonSubtype(m.SubType) {
			continue
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b slack.Message) int {
		return cmp.Compare(storage.OrderOf(a.Timestamp), storage.OrderOf(b.Timestamp))
	})
	return out
}

// before reports whether Slack timestamp a is before b (storage.OrderOf's
// order); an unreadable one is before everything.
func before(a, b string) bool { return storage.OrderOf(a) < storage.OrderOf(b) }
