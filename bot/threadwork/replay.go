package threadwork

import (
	"slices"

	"agentbot/bot/threadstate"
	"agentbot/engine/transcript"
)

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
