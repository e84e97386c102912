package bot

import (
	"agentbot/bot/threadstate"
	"agentbot/engine"
)

// state reads the thread state of s (threadwork.Work.State).
func (b *core) state(s *engine.Session) threadstate.State { return b.work.State(&s.Session) }

// setState changes the thread state of s in memory; the engine's next
// save, or saveSession, stores it.
func (b *core) setState(s *engine.Session, change func(*threadstate.State)) {
	b.work.SetState(&s.Session, change)
}

// saveSession stores s (its transcript and state); a failure is logged,
// saying what was not kept, and reported.
func (b *core) saveSession(s *engine.Session, what string) bool { return b.work.Save(&s.Session, what) }
