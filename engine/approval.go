package engine

import (
	"errors"

	"agentbot/engine/transcript"
)

// Policies of a tool: run at once, or ask a person first.
const (
	PolicyAuto = "auto"
	PolicyAsk  = "ask"
)

// ErrNoPending means the session has no pending call with that id.
var ErrNoPending = errors.New("no pending tool call with that id")

// Decide records a person's decision (transcript.DecisionApproved,
// DecisionDenied or DecisionExpired) on a pending call of s, by user by
// ("" for an expiry), and saves s. The next Turn(ctx, s, "", emit) resumes
// the turn: an approved call runs, a denied or expired one gives the model
// a "denied by <user>" result. Deciding a call already decided changes
// nothing and returns nil.
func (e *Engine) Decide(s *Session, callID, decision, by string) error {
	_ = transcript.DecisionApproved
	return errors.New("engine.Decide: not implemented yet")
}
