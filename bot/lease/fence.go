package lease

import (
	"errors"
	"sync"
	"time"

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
		SaveSession(*transcript.Session) error
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
	SaveSession(*transcript.Session) error
}

// NewFences returns the fences of a process over st.
func NewFences(st FencedStore) *Fences { return &Fences{st: st, sv: st} }

// SaveSession saves s, fenced when this process holds its thread.
func (f *Fences) SaveSession(s *transcript.Session) error {
	if v, ok := f.outputs.Load(s.Key); ok {
		v.(func(*transcript.Session))(s)
	}
	if v, ok := f.m.Load(s.Key); ok {
		return f.st.SaveSessionFenced(v.(storage.Fence), s)
	}
	return f.sv.SaveSession(s)
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
// refuses once the lease is lost or the store says the fence is stale.
func (l *Held) Guard() error {
	if l.ctx.Err() != nil {
		return errors.New("the thread lease is gone")
	}
	l.checkMu.Lock()
	defer l.checkMu.Unlock()
	if time.Since(l.checked) < checkEvery {
		return nil
	}
	if err := l.cfg.Store.CheckFence(l.fence); err != nil {
		if errors.Is(err, storage.ErrFenced) {
			l.lose("fenced: another replica holds the thread")
		}
		return err
	}
	l.checked = time.Now()
	return nil
}

// Complete finishes item seq of l's thread under the fence: the session
// meta that meta returns (such as the posted marker; none when nil) and
// the dequeue, in one write; the turn's output record goes with it. A
// write that fails for a passing reason (a connection reset) is tried
// again, meta asked again, while the lease holds, so the item is not
// replayed and answered twice.
func (l *Held) Complete(seq uint64, meta func() (map[string]string, error)) error {
	wait := 50 * time.Millisecond
	for {
		m, err := meta()
		if err == nil {
			err = l.cfg.Store.CompleteFenced(l.fence, seq, m)
		}
		switch {
		case err == nil:
			l.cfg.Fences.outputs.Delete(l.key)
			return nil
		case errors.Is(err, storage.ErrFenced):
			l.lose("fenced at dequeue: another replica holds the thread")
			return err
		case errors.Is(err, storage.ErrNotFound):
			return err
		}
		l.cfg.Log.Warn("dequeue; trying again", "thread", l.key, "err", err)
		if !l.sleep(wait) {
			return err
		}
		wait = min(2*wait, time.Second)
	}
}

// sleep waits d, or less when the lease ends; it reports whether it
// waited d.
func (l *Held) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
