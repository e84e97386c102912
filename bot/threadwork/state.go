package threadwork

import (
	"agentbot/bot/threadstate"
	"agentbot/engine/transcript"
)

// The thread state (package threadstate) of a session: read and changed
// in memory, or stored with the session.

// State reads the thread state of s; a part that does not parse is logged
// and left out.
func (w *Work) State(s *transcript.Session) threadstate.State {
	st, err := threadstate.Of(s)
	if err != nil {
		w.cfg.Log.Warn("unreadable thread state left out", "err", err)
	}
	return st
}

// SetState changes the thread state of s in memory; the engine's next
// save, or Save, stores it.
func (w *Work) SetState(s *transcript.Session, change func(*threadstate.State)) {
	st := w.State(s)
	change(&st)
	threadstate.Put(s, st)
}

// Save stores s (its transcript and state) under the thread's fence; a
// failure is logged, saying what was not kept, and reported.
func (w *Work) Save(s *transcript.Session, what string) bool {
	if err := w.cfg.Fences.SaveSession(s); err != nil {
		w.cfg.Log.Error("save session: "+what, "session", s.ID, "err", err)
		return false
	}
	return true
}

// StoreMeta stores the thread state of s with the session's metadata
// only: the engine saved the transcript already.
func (w *Work) StoreMeta(s *transcript.Session) error {
	return w.cfg.Store.SetMeta(s.Key, threadstate.MetaKey, s.Meta[threadstate.MetaKey])
}
