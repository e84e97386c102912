// Package threadstate is the bot's own state of a thread's session,
// besides the transcript, as it is stored with the session: who started
// it, where its queue stands, the text waiting for the picker, the
// approval messages posted, its feedback, the last menu item picked, the
// latest message answered and the output of the turn in flight. Of and
// Put are the one place it is read and written.
package threadstate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"agentbot/engine/transcript"
)

// State is the bot's own state of a thread's session. It is stored in the
// session's Meta under MetaKey as one JSON value.
type State struct {
	// Owner is the user who started the session; others' messages are
	// attributed, so the agent can tell people apart.
	Owner string `json:"owner,omitempty"`
	// Seq is the queue seq of the last item handed to a turn, so a replay
	// after a crash resumes the turn instead of repeating its input.
	Seq uint64 `json:"seq,omitempty"`
	// Input is the queued item of Seq, once a turn took it: when that
	// turn stored the message and failed, and an earlier message comes
	// late, the stored one is answered first (the bot's answerStored).
	Input *Input `json:"input,omitempty"`
	// Early are the queue seqs of items answered ahead of their turn in
	// the queue, newest last: their turn posts nothing.
	Early []uint64 `json:"early,omitempty"`
	// Posted is the queue seq of the last item whose reply was posted: a
	// replay of it, after a crash between posting and dequeueing, posts
	// nothing.
	Posted uint64 `json:"posted,omitempty"`
	// Pending is the text of the messages that wait for the picker.
	Pending string `json:"pending,omitempty"`
	// Deferred are the messages of people who may not decide the tool
	// calls the thread waits on, written while it waits: each is
	// answered, in order, once the wait ends (the owner decides, the
	// calls expire, or the owner writes instead), and stays here until
	// its turn ran, so a crash loses none.
	Deferred []Input `json:"deferred,omitempty"`
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
	// answered: a message older than it came late.
	Answered string `json:"answered,omitempty"`
	// Greet is the agent whose greeting an activation owes the thread: set
	// with the activation (stored in the same write) and cleared once the
	// greeting is posted, so a run that died in between is followed by
	// one that posts it (unless the thread shows it already).
	Greet string `json:"greet,omitempty"`
	// Output is what the turn in flight showed in the thread.
	Output *Output `json:"output,omitempty"`
}

// Feedback is one click of an answer's feedback buttons.
type Feedback struct {
	TS       string    `json:"ts"`                 // the answer's message
	User     string    `json:"user"`               // who clicked
	Value    string    `json:"value"`              // "positive" or "negative"
	Agent    string    `json:"agent"`              // the session's agent id
	Workflow string    `json:"workflow,omitempty"` // active skill or last menu item picked
	Time     time.Time `json:"time"`
}

// Output is what a turn showed in its thread so far, with the queue seq
// of its item: kept in the state (State.Output) under the thread's fence,
// so a replica that resumes the turn closes the stream the earlier run
// left open, and does not answer an item whose answer is in the thread
// already.
type Output struct {
	Seq uint64 `json:"seq"`
	Shown
}

// Shown is what a turn has shown in its thread: this package's own copy
// of the renderer's record (bot/render.Output), so the stored format
// depends on no renderer; the bot converts between the two.
type Shown struct {
	// StreamTS is the stream the turn opened last.
	StreamTS string `json:"stream,omitempty"`
	// Open is set while that stream may still be open.
	Open bool `json:"open,omitempty"`
	// AnswerTS is the first message of the posted final answer.
	AnswerTS string `json:"answer,omitempty"`
	// Done is set once the whole final answer is in the thread.
	Done bool `json:"done,omitempty"`
	// Starting is set while a stream is being opened, its ts not known
	// yet.
	Starting bool `json:"starting,omitempty"`
	// Notice is a failure notice the turn posted while its message stays
	// queued: it is not the answer.
	Notice string `json:"notice,omitempty"`
}

// Prior is the output record of item seq's earlier run, if any.
func (st State) Prior(seq uint64) Shown {
	if st.Output == nil || st.Output.Seq != seq {
		return Shown{}
	}
	return st.Output.Shown
}

// MetaKey is the session Meta key holding the State.
const MetaKey = "bot.thread"

// The Meta keys sessions stored before State, one per field (two of them
// JSON inside the string). Of reads them when MetaKey is absent; Put
// removes them.
const (
	oldMetaSeq       = "bot.seq"
	oldMetaPending   = "bot.pending"
	oldMetaOwner     = "bot.owner"
	oldMetaPosted    = "bot.posted"
	oldMetaApprovals = "bot.approvals"
	// OldMetaFeedback is the key of the feedback, a JSON list of Feedback.
	OldMetaFeedback = "bot.feedback"
	oldMetaWorkflow = "bot.workflow"
)

// OldMetaKeys are the Meta keys of the form before State: a write of the
// state clears them.
var OldMetaKeys = []string{oldMetaSeq, oldMetaPending, oldMetaOwner, oldMetaPosted, oldMetaApprovals, OldMetaFeedback, oldMetaWorkflow}

// Of reads the thread state stored with s. A part that does not parse is
// left out and reported in the error; the rest is returned.
func Of(s *transcript.Session) (State, error) {
	var st State
	if raw, ok := s.Meta[MetaKey]; ok {
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			return State{}, fmt.Errorf("session %s: thread state: %w", s.ID, err)
		}
		return st, nil
	}
	return oldState(s)
}

// oldState reads the thread state of a session stored with one Meta key
// per field.
func oldState(s *transcript.Session) (State, error) {
	m := s.Meta
	st := State{Owner: m[oldMetaOwner], Pending: m[oldMetaPending], Workflow: m[oldMetaWorkflow]}
	var errs []error
	st.Seq, errs = oldSeq(m[oldMetaSeq], errs)
	st.Posted, errs = oldSeq(m[oldMetaPosted], errs)
	if raw := m[oldMetaApprovals]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &st.Approvals); err != nil {
			errs = append(errs, fmt.Errorf("approvals: %w", err))
		}
	}
	if raw := m[OldMetaFeedback]; raw != "" {
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

// Put writes st into s's Meta, in place of any older form, and its Owner
// into s.Owner, which the stores index (storage.SessionIndex); the next
// SaveSession stores both. (storage.OwnerOf reads the owner of a session
// stored before Owner from MetaKey's "owner", or oldMetaOwner.)
func Put(s *transcript.Session, st State) {
	for _, k := range OldMetaKeys {
		s.SetMeta(k, "")
	}
	s.SetMeta(MetaKey, st.Encode())
	if st.Owner != "" {
		s.Owner = st.Owner
	}
}

// Encode is st as stored under MetaKey.
func (st State) Encode() string {
	data, err := json.Marshal(st)
	if err != nil {
		panic(fmt.Sprintf("encode thread state: %v", err)) // strings, numbers and maps only
	}
	return string(data)
}

// Input is a queued item with its seq; Item is the bot's own item, as
// JSON.
type Input struct {
	Seq  uint64          `json:"seq"`
	Item json.RawMessage `json:"item"`
}
