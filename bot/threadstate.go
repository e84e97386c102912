package bot

import (
	"context"

	"agentbot/bot/threadstate"
	"agentbot/engine"
)

// The thread state (package threadstate) of a session: read and changed
// in memory, or stored with the session's metadata only.

// state reads the thread state of s; a part that does not parse is logged
// and left out.
func (b *Bot) state(s *engine.Session) threadstate.State {
	st, err := threadstate.Of(&s.Session)
	if err != nil {
		b.log.Warn("unreadable thread state left out", "err", err)
	}
	return st
}

// setState changes the thread state of s in memory; the engine's next
// save, or saveSession, stores it.
func (b *Bot) setState(s *engine.Session, change func(*threadstate.State)) {
	st := b.state(s)
	change(&st)
	threadstate.Put(&s.Session, st)
}

// saveSession stores s (its transcript and state); a failure is logged,
// saying what was not kept, and reported.
func (b *Bot) saveSession(s *engine.Session, what string) bool {
	if err := b.fences.SaveSession(context.TODO(), &s.Session); err != nil {
		b.log.Error("save session: "+what, "session", s.ID, "err", err)
		return false
	}
	return true
}

// storeState changes the thread state of the session of key in the store,
// with its metadata only, never its transcript: for a change after the
// engine saved the session. A thread without a session has no state.
func (b *Bot) storeState(key string, change func(*threadstate.State)) error {
	rec, err := b.cfg.Store.FindMeta(context.TODO(), key)
	if err != nil || rec == nil {
		return err
	}
	st, err := threadstate.Of(rec)
	if err != nil {
		b.log.Warn("unreadable thread state left out", "err", err)
	}
	change(&st)
	return b.cfg.Store.SetMeta(context.TODO(), key, threadstate.MetaKey, st.Encode())
}
