package bot

import (
	"encoding/json"
	"fmt"
	"strconv"

	"agentbot/engine"
	"agentbot/engine/transcript"
)

// threadState is the bot's own state of a thread's session, besides the
// transcript: who started it, where its queue stands, the text waiting
// for the picker, the approval messages posted, its feedback and the last
// menu item picked. It is stored with the session, in its Meta under
// metaThread as one JSON value; stateOf and putState are the one place it
// is read and written.
type threadState struct {
	// Owner is the user who started the session; others' messages are
	// attributed, so the agent can tell people apart.
	Owner string `json:"owner,omitempty"`
	// Seq is the queue seq of the last item handed to a turn, so a replay
	// after a crash resumes the turn instead of repeating its input.
	Seq uint64 `json:"seq,omitempty"`
	// Input is the message item of Seq, once a turn took it: when that
	// turn stored the message and failed, and an earlier message comes
	// late, the stored one is answered first (answerStored).
	Input *seqItem `json:"input,omitempty"`
	// Early are the queue seqs of items answered ahead of their turn in
	// the queue (answerStored), newest last: their turn posts nothing.
	Early []uint64 `json:"early,omitempty"`
	// Posted is the queue seq of the last item whose reply was posted: a
	// replay of it, after a crash between posting and dequeueing, posts
	// nothing.
	Posted uint64 `json:"posted,omitempty"`
	// Pending is the text of the messages that wait for the picker.
	Pending string `json:"pending,omitempty"`
	// Approvals are the messages (ts) of the calls waiting for approval,
	// by call id.
	Approvals map[string]string `json:"approvals,omitempty"`
	// Feedback are the clicks of the answers' feedback buttons, oldest
	// first, one per answer and user.
	Feedback []Feedback `json:"feedback,omitempty"`
	// Workflow is the last menu item picked (its trigger, skill or
	// command), for feedback and metrics.
	Workflow string `json:"workflow,omitempty"`
	// Answered is the Slack ts of the latest message of the thread a turn
	// answered: a message older than it came late (lateNote).
	Answered string `json:"answered,omitempty"`
	// Output is what the turn in flight showed in the thread (fence.go).
	Output *turnOutput `json:"output,omitempty"`
}

// seqItem is a queued item with its seq.
type seqItem struct {
	Seq  uint64 `json:"seq"`
	Item item   `json:"item"`
}

// metaThread is the session Meta key holding the threadState.
const metaThread = "bot.thread"

// The Meta keys sessions stored before threadState, one per field (two of
// them JSON inside the string). stateOf reads them when metaThread is
// absent; putState removes them.
const (
	oldMetaSeq       = "bot.seq"
	oldMetaPending   = "bot.pending"
	oldMetaOwner     = "bot.owner"
	oldMetaPosted    = "bot.posted"
	oldMetaApprovals = "bot.approvals"
	oldMetaFeedback  = "bot.feedback"
	oldMetaWorkflow  = "bot.workflow"
)

var oldMetaKeys = []string{oldMetaSeq, oldMetaPending, oldMetaOwner, oldMetaPosted, oldMetaApprovals, oldMetaFeedback, oldMetaWorkflow}

// stateOf reads the thread state stored with s. A part that does not
// parse is left out and reported in the error; the rest is returned.
func stateOf(s *transcript.Session) (threadState, error) {
	var st threadState
	if raw, ok := s.Meta[metaThread]; ok {
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			return threadState{}, fmt.Errorf("session %s: thread state: %w", s.ID, err)
		}
		return st, nil
	}
	return oldState(s)
}

// oldState reads the thread state of a session stored with one Meta key
// per field.
func oldState(s *transcript.Session) (threadState, error) {
	m := s.Meta
	st := threadState{Owner: m[oldMetaOwner], Pending: m[oldMetaPending], Workflow: m[oldMetaWorkflow]}
	var errs []error
	st.Seq, errs = oldSeq(m[oldMetaSeq], errs)
	st.Posted, errs = oldSeq(m[oldMetaPosted], errs)
	if raw := m[oldMetaApprovals]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &st.Approvals); err != nil {
			errs = append(errs, fmt.Errorf("approvals: %w", err))
		}
	}
	if raw := m[oldMetaFeedback]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &st.Feedback); err != nil {
			st.Feedback = nil
			errs = append(errs, fmt.Errorf("feedback: %w", err))
		}
	}
	if len(errs) > 0 {
		return st, fmt.Errorf("session %s: thread state: %v", s.ID, errs)
	}
	return st, nil
}

// oldSeq parses a queue seq stored as decimal text ("": none).
func oldSeq(v string, errs []error) (uint64, []error) {
	if v == "" {
		return 0, errs
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, append(errs, fmt.Errorf("seq %q: %w", v, err))
	}
	return n, errs
}

// putState writes st into s's Meta, in place of any older form; the next
// SaveSession stores it.
func putState(s *transcript.Session, st threadState) {
	for _, k := range oldMetaKeys {
		s.SetMeta(k, "")
	}
	s.SetMeta(metaThread, st.encode())
}

// encode is st as stored under metaThread.
func (st threadState) encode() string {
	data, err := json.Marshal(st)
	if err != nil {
		panic(fmt.Sprintf("encode thread state: %v", err)) // strings, numbers and maps only
	}
	return string(data)
}

// state reads the thread state of s; a part that does not parse is logged
// and left out.
func (b *Bot) state(s *engine.Session) threadState {
	st, err := stateOf(&s.Session)
	if err != nil {
		b.log.Warn("unreadable thread state left out", "err", err)
	}
	return st
}

// setState changes the thread state of s in memory; the engine's next
// save, or saveSession, stores it.
func (b *Bot) setState(s *engine.Session, change func(*threadState)) {
	st := b.state(s)
	change(&st)
	putState(&s.Session, st)
}

// saveSession stores s (its transcript and state); a failure is logged,
// saying what was not kept, and reported.
func (b *Bot) saveSession(s *engine.Session, what string) bool {
	if err := b.fences.SaveSession(&s.Session); err != nil {
		b.log.Error("save session: "+what, "session", s.ID, "err", err)
		return false
	}
	return true
}

// storeState changes the thread state of the session of key in the store,
// with its metadata only, never its transcript: for a change after the
// engine saved the session. A thread without a session has no state.
func (b *Bot) storeState(key string, change func(*threadState)) error {
	rec, err := b.cfg.Store.FindMeta(key)
	if err != nil || rec == nil {
		return err
	}
	st, err := stateOf(rec)
	if err != nil {
		b.log.Warn("unreadable thread state left out", "err", err)
	}
	change(&st)
	return b.cfg.Store.SetMeta(key, metaThread, st.encode())
}
