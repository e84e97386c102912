package threadwork

import (
	"context"
	"slices"

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
func (w *Work) Save(ctx context.Context, s *transcript.Session, what string) bool {
	if err := w.cfg.Fences.SaveSession(ctx, s); err != nil {
		w.cfg.Log.Error("save session: "+what, "session", s.ID, "err", err)
		return false
	}
	return true
}

// StoreMeta stores the thread state of s with the session's metadata
// only: the engine saved the transcript already.
func (w *Work) StoreMeta(ctx context.Context, s *transcript.Session) error {
	return w.cfg.Store.SetMeta(ctx, s.Key, threadstate.MetaKey, s.Meta[threadstate.MetaKey])
}

// Replay is what becomes of a queued item of a thread's conversation
// that may have been seen before a crash (ReplayOf).
type Replay int

const (
	// Fresh: the item is handled as new.
	Fresh Replay = iota
	// Skip: it was handled and posted, and only its dequeue was lost, or
	// it was answered ahead of its turn (State.Early).
	Skip
	// Resume: its turn started (its input is in the transcript already):
	// the turn is resumed instead of repeated.
	Resume
	// StoredFirst: a later item's turn stored its message in the
	// transcript and then failed, and this item, an earlier message that
	// came late, goes before it: the stored message (State.Input) is
	// answered first, where it stands in the transcript, and noted
	// answered early (NoteEarly); then this item is handled.
	StoredFirst
)

// ReplayOf is what becomes of item seq of the conversation of session s
// with thread state st; agent says the session has an agent.
func ReplayOf(st threadstate.State, seq uint64, agent bool, s *transcript.Session) Replay {
	switch {
	case st.Posted == seq || st.Prior(seq).Done || slices.Contains(st.Early, seq):
		return Skip
	case agent && st.Seq == seq:
		return Resume
	}
	n := len(s.Messages)
	if !agent || st.Input == nil || st.Input.Seq != st.Seq || st.Posted == st.Seq ||
		n == 0 || s.Messages[n-1].Role != transcript.RoleUser || len(s.Pending) > 0 {
		return Fresh
	}
	return StoredFirst
}

// maxEarly bounds State.Early: an item answered early is skipped when the
// queue reaches it, soon after.
const maxEarly = 16

// NoteEarly notes item seq answered ahead of its turn in the queue: it is
// skipped when the queue reaches it.
func NoteEarly(st *threadstate.State, seq uint64) {
	st.Early = append(st.Early, seq)
	st.Early = st.Early[max(0, len(st.Early)-maxEarly):]
}
