package bot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/render"
	"agentbot/bot/slackmd"
	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Fencing: a thread's lease carries a token (storage.Fence). Every write
// this replica makes for a thread it works is checked against it: the
// transcript saves of its turns (Fences, the engine's store), the posted
// marker with the dequeue (storage.Fenced.CompleteFenced), the turn's
// output record, and every Slack call of its reply (leaseGuard). A replica
// that lost the thread (frozen past its lease, cut off from the store)
// writes nothing, in the store or in Slack.

// Fences are the fences of the threads this process works. Saves through
// it (the engine's store) of a thread with a fence are fenced saves; other
// saves are plain. Wire one store into the engine and the bot
// (Config.Fences); without it the bot keeps its own, and the engine's
// saves are not fenced.
type Fences struct {
	st storage.Fenced
	sv interface {
		SaveSession(*transcript.Session) error
	}
	m sync.Map // thread key → storage.Fence
	// outputs holds the output record (threadState.Output) of each
	// thread's turn in flight, so the turn's own saves keep it.
	outputs sync.Map // thread key → turnOutput
}

// FencedStore is a store that can save under a fence.
type FencedStore interface {
	storage.Fenced
	SaveSession(*transcript.Session) error
}

// NewFences returns the fences of a process over st.
func NewFences(st FencedStore) *Fences { return &Fences{st: st, sv: st} }

// SaveSession saves s, fenced when this process holds its thread.
func (f *Fences) SaveSession(s *transcript.Session) error {
	if v, ok := f.outputs.Load(s.Key); ok {
		st, _ := stateOf(s) // unreadable parts were logged where read
		o := v.(turnOutput)
		st.Output = &o
		putState(s, st)
	}
	if v, ok := f.m.Load(s.Key); ok {
		return f.st.SaveSessionFenced(v.(storage.Fence), s)
	}
	return f.sv.SaveSession(s)
}

func (f *Fences) hold(fc storage.Fence) { f.m.Store(fc.Key, fc) }

func (f *Fences) drop(fc storage.Fence) {
	if f.m.CompareAndDelete(fc.Key, fc) {
		f.outputs.Delete(fc.Key)
	}
}

// fenceCheckEvery is how long a fence check of the store counts for the
// Slack calls that follow it: short, so a replica that wakes from a
// freeze asks the store again before its next call.
const fenceCheckEvery = 250 * time.Millisecond

// guard is asked before every Slack call of a turn in l's thread: it
// refuses once the lease is lost or the store says the fence is stale.
func (l *heldLease) guard() error {
	if l.ctx.Err() != nil {
		return errors.New("the thread lease is gone")
	}
	l.checkMu.Lock()
	defer l.checkMu.Unlock()
	if time.Since(l.checked) < fenceCheckEvery {
		return nil
	}
	if err := l.b.cfg.Store.CheckFence(l.fence); err != nil {
		if errors.Is(err, storage.ErrFenced) {
			l.lose("fenced: another replica holds the thread")
		}
		return err
	}
	l.checked = time.Now()
	return nil
}

// renewOnce renews the lease, waiting for the store at most until
// giveUp: a store that stalls never holds the thread past the point where
// another replica may take it over.
func (l *heldLease) renewOnce(giveUp time.Time) error {
	done := make(chan error, 1)
	go func() { done <- l.b.cfg.Store.RenewLease(l.fence, l.b.cfg.LeaseTTL) }()
	t := time.NewTimer(time.Until(giveUp))
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errors.New("the store did not answer the renewal in time")
	case <-l.ctx.Done():
		return l.ctx.Err()
	}
}

// complete finishes item seq of l's thread under the fence: the posted
// marker (unless posted is false: feedback posts nothing) and the dequeue,
// in one write; the turn's output record goes with it. A write that fails
// for a passing reason (a connection reset) is tried again while the
// lease holds, so the item is not replayed and answered twice.
func (l *heldLease) complete(seq uint64, posted bool) error {
	wait := 50 * time.Millisecond
	for {
		meta, err := l.postedMeta(seq, posted)
		if err == nil {
			err = l.b.cfg.Store.CompleteFenced(l.fence, seq, meta)
		}
		switch {
		case err == nil:
			l.b.fences.outputs.Delete(l.key)
			return nil
		case errors.Is(err, storage.ErrFenced):
			l.lose("fenced at dequeue: another replica holds the thread")
			return err
		case errors.Is(err, storage.ErrNotFound):
			return err
		}
		l.b.log.Warn("dequeue; trying again", "thread", l.key, "err", err)
		if sleepCtx(l.ctx, wait) != nil {
			return err
		}
		wait = min(2*wait, time.Second)
	}
}

// postedMeta is the session meta that marks item seq posted: the thread
// state with Posted set (read from the store: under the lease only this
// replica writes it), and the output record cleared. None when nothing
// was posted, or the thread has no session.
func (l *heldLease) postedMeta(seq uint64, posted bool) (map[string]string, error) {
	if !posted {
		return nil, nil
	}
	rec, err := l.b.cfg.Store.FindMeta(l.key)
	if err != nil || rec == nil {
		return nil, err
	}
	st, err := stateOf(rec)
	if err != nil {
		l.b.log.Warn("unreadable thread state left out", "err", err)
	}
	st.Posted, st.Output = seq, nil
	meta := map[string]string{metaThread: st.encode()}
	for _, k := range oldMetaKeys {
		meta[k] = ""
	}
	return meta, nil
}

// turnOutput is what a turn showed in its thread so far, with the queue
// seq of its item: kept in the thread state (threadState.Output) under
// the fence, so a replica that resumes the turn closes the stream the
// earlier run left open, and does not answer an item whose answer is in
// the thread already.
type turnOutput struct {
	Seq uint64 `json:"seq"`
	render.Output
}

// priorOutput is the output record of item seq's earlier run, if any.
func priorOutput(st threadState, seq uint64) render.Output {
	if st.Output == nil || st.Output.Seq != seq {
		return render.Output{}
	}
	return st.Output.Output
}

// recordOutput keeps a turn's output record under the thread's fence.
func (b *Bot) recordOutput(ctx context.Context, key string, seq uint64, o render.Output) {
	l := leaseOf(ctx)
	if l == nil {
		return
	}
	to := turnOutput{Seq: seq, Output: o}
	b.fences.outputs.Store(key, to)
	rec, err := b.cfg.Store.FindMeta(key)
	if err == nil && rec != nil {
		st, _ := stateOf(rec)
		st.Output = &to
		err = b.cfg.Store.SetMetaFenced(l.fence, metaThread, st.encode())
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		b.log.Warn("record the turn's output", "thread", key, "err", err)
	}
}

// leaseKey is the context key of the lease a thread's work runs under.
type leaseKey struct{}

// leaseOf returns the lease ctx's work runs under, or nil.
func leaseOf(ctx context.Context) *heldLease {
	l, _ := ctx.Value(leaseKey{}).(*heldLease)
	return l
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
	l := leaseOf(ctx)
	if res == nil || strings.TrimSpace(res.Text) == "" {
		if l != nil {
			l.keep.Store(true)
		}
		return err
	}
	b.log.Warn("the answer could not be stored; storing it again", "session", s.ID, "err", err)
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		if sleepCtx(ctx, wait) != nil {
			if l != nil {
				l.keep.Store(true) // not stored: the item is not done
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
		b.setState(s, func(st *threadState) { st.Answered = it.TS })
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
	l := leaseOf(ctx)
	if l == nil || errors.Is(err, storage.ErrExists) {
		return false
	}
	if _, ok := errors.AsType[*engine.SaveError](err); !ok {
		return false
	}
	l.keep.Store(true)
	return true
}
