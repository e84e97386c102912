package bot

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/lease"
	"agentbot/bot/render"
	"agentbot/bot/slackmd"
	"agentbot/bot/threadstate"
	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Work under a thread's lease (package lease): the lease is taken,
// renewed and fenced there; here the bot holds it for a thread, marks an
// item posted at its dequeue, keeps a turn's output record, and handles
// a turn whose store or Slack delivery failed.

// Fences are the fences of the threads this process works (lease.Fences):
// wire one store into the engine and the bot (Config.Fences).
type Fences = lease.Fences

// FencedStore is a store that can save under a fence (lease.FencedStore).
type FencedStore = lease.FencedStore

// NewFences returns the fences of a process over st.
func NewFences(st FencedStore) *Fences { return lease.NewFences(st) }

// leaseDefaults fills in ReplicaID and LeaseTTL.
func (c *Config) leaseDefaults() {
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = lease.DefaultTTL
	}
	if c.ReplicaID == "" {
		c.ReplicaID = lease.NewReplicaID()
	}
}

// ReplicaID is this bot's name among the replicas sharing the store.
func (b *Bot) ReplicaID() string { return b.cfg.ReplicaID }

// holdLease starts renewing a thread's lease just taken.
func (b *Bot) holdLease(f storage.Fence) *lease.Held {
	return lease.Hold(b.turnCtx, f, lease.Config{Store: b.cfg.Store, Fences: b.fences,
		TTL: b.cfg.LeaseTTL, Replica: b.cfg.ReplicaID, Log: b.log})
}

// complete finishes item seq of l's thread under the fence: the posted
// marker (unless posted is false: feedback posts nothing) and the dequeue.
func (b *Bot) complete(l *lease.Held, seq uint64, posted bool) error {
	return l.Complete(seq, func() (map[string]string, error) { return b.postedMeta(l, seq, posted) })
}

// postedMeta is the session meta that marks item seq posted: the thread
// state with Posted set (read from the store: under the lease only this
// replica writes it), and the output record cleared. None when nothing
// was posted, or the thread has no session.
func (b *Bot) postedMeta(l *lease.Held, seq uint64, posted bool) (map[string]string, error) {
	if !posted {
		return nil, nil
	}
	rec, err := b.cfg.Store.FindMeta(context.TODO(), l.Fence().Key)
	if err != nil || rec == nil {
		return nil, err
	}
	st, err := threadstate.Of(rec)
	if err != nil {
		b.log.Warn("unreadable thread state left out", "err", err)
	}
	st.Posted, st.Output = seq, nil
	meta := map[string]string{threadstate.MetaKey: st.Encode()}
	for _, k := range threadstate.OldMetaKeys {
		meta[k] = ""
	}
	return meta, nil
}

// recordOutput keeps a turn's output record under the thread's fence. It
// is stored before the reply's next Slack call (tried again after a
// passing fault while the lease holds; a lost lease refuses that call), so
// a run that resumes the turn always knows what this one showed.
func (b *Bot) recordOutput(ctx context.Context, key string, seq uint64, o render.Output) {
	l := lease.Of(ctx)
	if l == nil {
		return
	}
	to := threadstate.Output{Seq: seq, Output: o}
	b.fences.KeepOutput(key, func(s *transcript.Session) {
		st, _ := threadstate.Of(s) // unreadable parts were logged where read
		o := to
		st.Output = &o
		threadstate.Put(s, st)
	})
	// Stored even when the turn is cancelled (its lease lost, a shutdown):
	// what it showed is shown, and the fence decides whether it may write.
	ctx = context.WithoutCancel(ctx)
	err := l.Retry("record the turn's output", func() error {
		rec, err := b.cfg.Store.FindMeta(ctx, key)
		if err != nil || rec == nil {
			return err
		}
		st, _ := threadstate.Of(rec)
		st.Output = &to
		return b.cfg.Store.CompleteFenced(ctx, l.Fence(), 0, map[string]string{threadstate.MetaKey: st.Encode()})
	})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		b.log.Warn("record the turn's output", "thread", key, "err", err)
	}
}

// storeFailed handles a turn that could not store its session: the store, not
// the model, failed. When the answer was generated it is shown (the error
// is dropped) and the session is stored again until it is, while the
// lease holds; otherwise the item stays queued, tried again once the store
// is back, so no message is dropped. It returns the error the reply shows.
func (b *Bot) storeFailed(ctx context.Context, s *engine.Session, res *engine.Result, err error) error {
	var se *engine.SaveError
	if !errors.As(err, &se) {
		return err
	}
	l := lease.Of(ctx)
	if res == nil || strings.TrimSpace(res.Text) == "" {
		if l != nil {
			l.Keep()
		}
		return err
	}
	b.log.Warn("the answer could not be stored; storing it again", "session", s.ID, "err", err)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		if sleepCtx(ctx, wait) != nil {
			if l != nil {
				l.Keep() // not stored: the item is not done
			}
			return nil
		}
		if err := b.cfg.Engine.Save(s); err == nil {
			return nil
		}
	}
}

// lateNote is what a turn's answer starts with when its message came late
// (Slack delivered it again after a fault) and a later message of the
// thread was answered already: which message it answers. It records its
// message as answered in s's thread state.
func (b *Bot) lateNote(s *engine.Session, it item) string {
	if it.Kind != kindMessage || it.TS == "" {
		return ""
	}
	order, latest := storage.OrderOf(it.TS), storage.OrderOf(b.state(s).Answered)
	switch {
	case order == 0 || order == latest:
		return ""
	case order > latest:
		b.setState(s, func(st *threadstate.State) { st.Answered = it.TS })
		return ""
	}
	quote := strings.Join(strings.Fields(it.Text), " ")
	return "Answering an earlier message" + whose(it.User) + ", which reached me late: “" + slackmd.Shorten(quote, 120) + "”"
}

// whose names the sender of a message for lateNote.
func whose(user string) string {
	if user == "" {
		return ""
	}
	return " from <@" + user + ">"
}

// closeUnnamed closes the streams an earlier run of the turn of it may
// have left open while it died opening one, before it learnt the stream's
// ts: every bot message in the thread after the item's message is stopped with the
// interrupted note (Slack refuses the stop of a message that is not an
// open stream, which changes nothing).
func (b *Bot) closeUnnamed(ctx context.Context, it item) {
	msgs, _, _, err := b.cfg.API.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
		ChannelID: it.Channel, Timestamp: it.ThreadTS, Oldest: it.TS, Limit: 200})
	if err != nil {
		b.log.Warn("find a stream an earlier run left open", "err", err)
		return
	}
	for _, m := range msgs {
		ours := m.User == b.botUserID || (m.BotID != "" && m.BotID == b.botID)
		if !ours || m.Timestamp == it.ThreadTS || storage.OrderOf(m.Timestamp) <= storage.OrderOf(it.TS) {
			continue
		}
		if fenced(ctx) != nil {
			return
		}
		if err := b.web().StopStream(ctx, it.Channel, m.Timestamp, render.InterruptedNote()); err == nil {
			b.log.Info("closed a stream an earlier run left open", "ts", m.Timestamp)
		}
	}
}

// retryLater keeps the item in hand queued, tried again once the store is
// back, when err is the store's (a session that could not be loaded or
// stored) and the item is worked under a lease; it reports whether it
// did. Nothing is posted: the message is not lost, only late.
func (b *Bot) retryLater(ctx context.Context, err error) bool {
	if errors.Is(err, storage.ErrExists) {
		return false
	}
	if _, ok := errors.AsType[*engine.SaveError](err); !ok {
		return false
	}
	return b.keepQueued(ctx)
}

// keepQueued keeps the item in hand queued, to be tried again once the
// store answers, when it is worked under a lease; it reports whether it
// did.
func (b *Bot) keepQueued(ctx context.Context) bool {
	l := lease.Of(ctx)
	if l == nil {
		return false
	}
	l.Keep()
	return true
}
