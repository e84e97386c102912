package lease

import (
	"context"
	"errors"
	"sync"
	"time"

	"agentbot/engine/retry"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Fences are the fences of the threads this process works. Saves through
// it (the engine's store) of a thread with a fence are fenced saves; other
// saves are plain. Wire one store into the engine and the bot; without it
// the bot keeps its own, and the engine's saves are not fenced.
type Fences struct {
	st storage.Fenced
	sv interface {
		SaveSession(context.Context, *transcript.Session) error
	}
	m sync.Map // thread key → storage.Fence
	// outputs holds what each save of a thread's session applies first
	// (the output record of the thread's turn in flight), so the turn's
	// own saves keep it.
	outputs sync.Map // thread key → func(*transcript.Session)
}

// FencedStore is a store that can save under a fence.
type FencedStore interface {
	storage.Fenced
	SaveSession(context.Context, *transcript.Session) error
}

// NewFences returns the fences of a process over st.
func NewFences(st FencedStore) *Fences { return &Fences{st: st, sv: st} }

// SaveSession saves s, fenced when this process holds its thread.
func (f *Fences) SaveSession(ctx context.Context, s *transcript.Session) error {
	if v, ok := f.outputs.Load(s.Key); ok {
		v.(func(*transcript.Session))(s)
	}
	if v, ok := f.m.Load(s.Key); ok {
		return f.st.SaveSessionFenced(ctx, v.(storage.Fence), s)
	}
	return f.sv.SaveSession(ctx, s)
}

// KeepOutput makes every save of key's session apply put first, until the
// thread's item completes or its lease is released: put records the
// output of the turn in flight in the session.
func (f *Fences) KeepOutput(key string, put func(*transcript.Session)) {
	f.outputs.Store(key, put)
}

func (f *Fences) hold(fc storage.Fence) { f.m.Store(fc.Key, fc) }

func (f *Fences) drop(fc storage.Fence) {
	if f.m.CompareAndDelete(fc.Key, fc) {
		f.outputs.Delete(fc.Key)
	}
}

// checkEvery is how long a fence check of the store counts for the Slack
// calls that follow it: short, so a replica that wakes from a freeze asks
// the store again before its next call.
const checkEvery = 250 * time.Millisecond

// Guard is asked before every Slack call of a turn in l's thread: it
// refuses once the lease is lost or the store says the fence is stale. A
// check the store fails to answer (a connection reset) is tried again
// while the lease holds: a passing fault is not a lost thread, and a
// refused call would leave the answer unposted.
func (l *Held) Guard() error {
	l.checkMu.Lock()
	defer l.checkMu.Unlock()
	if l.ctx.Err() != nil {
		return errGone
	}
	if time.Since(l.checked) < checkEvery {
		return nil
	}
	err := l.Retry("check the thread's fence", func() error { return l.cfg.Store.CheckFence(l.ctx, l.fence) })
	if err == nil {
		l.checked = time.Now()
	}
	return err
}

// errGone is what a fenced step answers once the lease is lost.
var errGone = errors.New("the thread lease is gone")

// Complete finishes item seq of l's thread under the fence: the session
// meta that meta returns (such as the posted marker; none when nil) and
// the dequeue, in one write; the turn's output record goes with it. Like
// every write through Retry, it is tried again after a passing fault,
// meta asked again, while the lease holds, so the item is not replayed and
// answered twice.
func (l *Held) Complete(seq uint64, meta func(ctx context.Context) (map[string]string, error)) error {
	// Written even when the lease's context ends meanwhile (a shutdown):
	// the item was handled, and the fence decides whether it may write.
	ctx := context.WithoutCancel(l.ctx)
	err := l.Retry("dequeue", func() error {
		m, err := meta(ctx)
		if err == nil {
			err = l.cfg.Store.CompleteFenced(ctx, l.fence, seq, m)
		}
		return err
	})
	if err == nil {
		l.cfg.Fences.outputs.Delete(l.key)
	}
	return err
}

// Retry runs write, a step of the thread's work under the fence, until it
// succeeds, the store says the fence is stale (the lease is then lost) or
// that what it writes is gone (storage.ErrNotFound), or the lease ends:
// a failure in between (a connection reset, a restarting database) is
// tried again with a growing pause, up to a second. It returns write's
// last error, joined with errGone when the lease ended before a success.
func (l *Held) Retry(what string, write func() error) error {
	wait := 25 * time.Millisecond
	for {
		err := write() // also once the lease is lost: the store says so (ErrFenced)
		switch {
		case err == nil, errors.Is(err, storage.ErrNotFound):
			return err
		case errors.Is(err, storage.ErrFenced):
			l.lose("fenced at " + what + ": another replica holds the thread")
			return err
		}
		l.cfg.Log.Warn(what+"; trying again", "thread", l.key, "err", err)
		if !l.sleep(wait) {
			return errors.Join(errGone, err)
		}
		wait = min(2*wait, time.Second)
	}
}

// sleep waits d, or less when the lease ends; it reports whether it
// waited d.
func (l *Held) sleep(d time.Duration) bool {
	return retry.Sleep(l.ctx, d) == nil
}
