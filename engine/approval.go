package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"agentbot/engine/transcript"
)

// Policies of a tool: run at once, or ask a person first.
const (
	PolicyAuto = "auto"
	PolicyAsk  = "ask"
)

// ErrNoPending means the session has no pending call with that id.
var ErrNoPending = errors.New("no pending tool call with that id")

// The results the model reads for a call that did not run for want of
// approval.
const (
	expiredText    = "no answer within the approval time; denied"
	supersededText = "not run: the user sent a new message instead of approving this call; denied"
)

// Decide records a person's decision (transcript.DecisionApproved,
// DecisionDenied or DecisionExpired) on a pending call of s, by user by
// ("" for an expiry), and saves s. The next Turn(ctx, s, "", emit) resumes
// the turn: an approved call runs, a denied or expired one gives the model
// a "denied by <user>" result. Deciding a call already decided changes
// nothing and returns nil. Decisions come only through Decide: nothing a
// tool or the model writes can approve a call. Like a turn, Decide must not
// run concurrently with another turn or Decide of the same session.
func (e *Engine) Decide(ctx context.Context, s *Session, callID, decision, by string) error {
	switch decision {
	case transcript.DecisionApproved, transcript.DecisionDenied, transcript.DecisionExpired, transcript.DecisionConnected:
	default:
		return fmt.Errorf("decide %s: unknown decision %q", callID, decision)
	}
	if s == nil {
		return ErrNoPending
	}
	for i := range s.Pending {
		p := &s.Pending[i]
		if p.CallID != callID {
			continue
		}
		if p.Decision != "" {
			return nil
		}
		if err := decideGate(p, decision, by, e.cfg.Now()); err != nil {
			return fmt.Errorf("decide %s: %w", callID, err)
		}
		if err := e.save(ctx, s); err != nil {
			return fmt.Errorf("decide %s: save: %w", callID, err)
		}
		return nil
	}
	return ErrNoPending
}

// ErrWrongGate means a decision that does not fit what the call waits
// for: an approval of a call whose person must connect first, or a
// connection on a call that waits for approval.
var ErrWrongGate = errors.New("the decision does not fit what the call waits for")

// decideGate applies decision by by at now to pending call p. A connect
// gate is ended by a connection (the call then runs, or waits for
// approval when its tool asks), a decline (denied by the person) or an
// expiry, never by an approval: only the person's own connection opens
// it.
func decideGate(p *transcript.Approval, decision, by string, now time.Time) error {
	connect := p.Kind == transcript.GateConnect
	switch {
	case decision == transcript.DecisionConnected && !connect, decision == transcript.DecisionApproved && connect:
		return ErrWrongGate
	case decision == transcript.DecisionConnected && p.Ask:
		p.Kind, p.Ask, p.Asked = transcript.GateApproval, false, now // now it waits for approval
		return nil
	case decision == transcript.DecisionConnected:
		decision = transcript.DecisionApproved
	case decision == transcript.DecisionExpired:
		by = ""
	}
	p.Decision, p.By, p.Decided = decision, by, now
	return nil
}

// undecided returns the pending calls of s still waiting for a decision.
func undecided(s *Session) []transcript.Approval {
	var out []transcript.Approval
	for _, p := range s.Pending {
		if p.Decision == "" {
			out = append(out, p)
		}
	}
	return out
}

// pause ends a turn whose response holds calls that need approval: the
// other calls run now and their results are held; the ask calls become
// s.Pending; the session is saved and the turn returns them. stored are
// the calls as stored in the transcript, sent as the model sent them.
func (e *Engine) pause(ctx context.Context, s *Session, tr *toolEnv, res *Result, stored, sent []transcript.ToolCall, gates []gate, start time.Time, emit func(Event)) (*Result, error) {
	ask := map[int]bool{}
	for _, g := range gates {
		ask[g.i] = true
	}
	var others []transcript.ToolCall
	for i, tc := range sent {
		if !ask[i] {
			others = append(others, tc)
		}
	}
	held := e.runTools(ctx, tr, others, emit, nil)
	res.Tools += len(others)
	now := e.cfg.Now()
	var pending []transcript.Approval
	for _, g := range gates {
		tc := stored[g.i]
		t, _ := tr.ext.lookup(sent[g.i].Function.Name)
		pending = append(pending, transcript.Approval{CallID: tc.ID, Tool: tc.Function.Name, Server: t.Server, Args: tc.Function.Arguments, Asked: now,
			Kind: g.kind, Person: s.Person, Ask: g.ask && g.kind == transcript.GateConnect})
	}
	s.Held, s.Pending = held, pending
	// The other calls ran: their results and the wait are kept even when
	// the turn was cancelled meanwhile, so a resume does not run them again.
	if err := e.save(context.WithoutCancel(ctx), s); err != nil {
		return res, fmt.Errorf("turn %s: save: %w", s.ID, err)
	}
	res.Pending = append([]transcript.Approval(nil), pending...)
	for i := range res.Pending {
		emit(Event{Kind: EventApproval, Tool: res.Pending[i].Tool, CallID: res.Pending[i].CallID,
			Status: waitingStatus(&res.Pending[i]), Approval: &res.Pending[i]})
	}
	e.cfg.Logger.Info("turn paused for approval", "session", s.ID, "pending", len(pending))
	res.Duration = time.Since(start)
	return res, nil
}

// waitingStatus says what a pending call waits for.
func waitingStatus(a *transcript.Approval) string {
	if a.Kind == transcript.GateConnect {
		return "waiting for the account at " + a.Server + " to be connected"
	}
	return "waiting for approval of " + a.Tool
}

// endApprovalWait ends the wait of the last response: approved calls run (in
// parallel), denied and expired ones get a result saying so, and every
// result of the response is appended in call order, the held ones
// included. With superseded, calls still undecided are denied because the
// user sent a new message. It clears Pending and Held and returns the
// number of calls that ran.
func (e *Engine) endApprovalWait(ctx context.Context, s *Session, tr *toolEnv, emit func(Event), superseded bool) int {
	w := newApprovalEnd(s, e.cfg.Now(), superseded, s.Person)
	calls := lastCalls(s)
	run, approvers := w.approved(calls)
	ran := map[string]transcript.Message{}
	for _, m := range e.runTools(ctx, tr, run, emit, approvers) {
		ran[m.ToolCallID] = m
	}
	var recs []transcript.ToolRecord
	for _, tc := range calls {
		if m, ok := w.held[tc.ID]; ok {
			s.Messages = append(s.Messages, m)
			continue
		}
		if m, ok := ran[tc.ID]; ok {
			s.Messages = append(s.Messages, m)
			continue
		}
		p, ok := w.decided[tc.ID]
		if !ok {
			s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleTool, ToolCallID: tc.ID, Content: encodeResult(errResult(interrupted))})
			continue
		}
		text, outcome := w.denial(p)
		content := encodeResult(ErrorResult{Error: text})
		s.Messages = append(s.Messages, transcript.Message{Role: transcript.RoleTool, ToolCallID: tc.ID, Content: content})
		recs = append(recs, tr.record(tc, outcome, p.By, len(content), 0))
		emit(Event{Kind: EventToolEnd, Tool: tc.Function.Name, CallID: tc.ID, Status: text, Err: text})
	}
	e.audit.add(s, recs...)
	s.Pending, s.Held = nil, nil
	return len(run)
}

// approvalEnd is what ending an approval wait works from: the decision on
// each pending call, the calls a new message denied, and the results held
// since the pause, each by call id.
type approvalEnd struct {
	decided map[string]transcript.Approval
	moved   map[string]bool // denied by the new message
	held    map[string]transcript.Message
}

// newApprovalEnd collects the decisions and held results of s. With
// superseded, a call still undecided is denied at now, in the name of by,
// the person whose new message moved on (the audit records who).
func newApprovalEnd(s *Session, now time.Time, superseded bool, by string) *approvalEnd {
	w := &approvalEnd{decided: map[string]transcript.Approval{}, moved: map[string]bool{}, held: heldResults(s)}
	for _, p := range s.Pending {
		if p.Decision == "" && superseded {
			p.Decision, p.Decided, p.By = transcript.DecisionDenied, now, by
			w.moved[p.CallID] = true
		}
		w.decided[p.CallID] = p
	}
	return w
}

// heldResults returns the results held since the pause, by call id.
func heldResults(s *Session) map[string]transcript.Message {
	held := map[string]transcript.Message{}
	for _, m := range s.Held {
		held[m.ToolCallID] = m
	}
	return held
}

// lastCalls returns the tool calls of the session's last assistant message.
func lastCalls(s *Session) []transcript.ToolCall {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := s.Messages[i]; m.Role == transcript.RoleAssistant {
			return m.ToolCalls
		}
	}
	return nil
}

// approved returns the calls approved and not yet run, in call order, and
// who approved each, by call id.
func (w *approvalEnd) approved(calls []transcript.ToolCall) ([]transcript.ToolCall, map[string]string) {
	var run []transcript.ToolCall
	approvers := map[string]string{}
	for _, tc := range calls {
		if p, ok := w.decided[tc.ID]; ok && p.Decision == transcript.DecisionApproved {
			if _, done := w.held[tc.ID]; !done {
				run = append(run, tc)
				approvers[tc.ID] = p.By
			}
		}
	}
	return run, approvers
}

// denial returns the result text and the audit outcome of a call that did
// not run: expired, denied by a new message, or denied by a person.
func (w *approvalEnd) denial(p transcript.Approval) (text, outcome string) {
	if p.Kind == transcript.GateConnect {
		return connectDenial(p, w.moved[p.CallID])
	}
	switch {
	case p.Decision == transcript.DecisionExpired:
		return expiredText, transcript.OutcomeExpired
	case w.moved[p.CallID]:
		return supersededText, transcript.OutcomeDenied
	case p.By == "":
		return "denied", transcript.OutcomeDenied
	default:
		return "denied by " + p.By, transcript.OutcomeDenied
	}
}

// connectDenial is the result text and audit outcome of a call that did
// not run because its person's account was not connected.
func connectDenial(p transcript.Approval, moved bool) (text, outcome string) {
	switch {
	case p.Decision == transcript.DecisionExpired:
		return "not run: no account at " + p.Server + " was connected in time", transcript.OutcomeExpired
	case moved:
		return "not run: the user sent a new message instead of connecting their account at " + p.Server, transcript.OutcomeDenied
	default:
		return "not run: the user declined to connect their account at " + p.Server + "; go on without it", transcript.OutcomeDenied
	}
}

// record builds the audit record of a call of the turn's tools.
func (env *toolEnv) record(tc transcript.ToolCall, outcome, approver string, size int, d time.Duration) transcript.ToolRecord {
	var server string
	if t, ok := env.ext.lookup(tc.Function.Name); ok {
		server = t.Server
	}
	return env.e.audit.record(tc, server, outcome, approver, size, d)
}

// auditor keeps the audit trail of tool calls: the clock of its records,
// the log, and the metrics hook told of each (Config.OnToolRecord).
type auditor struct {
	now func() time.Time
	log *slog.Logger
	on  func(rec transcript.ToolRecord)
}

// record builds the audit record of a call of a tool from server ("":
// a built-in tool): no arguments, no result, only a digest and a size.
func (a *auditor) record(tc transcript.ToolCall, server, outcome, approver string, size int, d time.Duration) transcript.ToolRecord {
	return transcript.ToolRecord{
		Time: a.now(), Tool: tc.Function.Name, Server: server, CallID: tc.ID,
		ArgsDigest: ArgsDigest(tc.Function.Arguments), ResultBytes: size,
		DurationMS: d.Milliseconds(), Outcome: outcome, Approver: approver,
	}
}

// add appends records to the session's audit trail and reports each.
func (a *auditor) add(s *Session, recs ...transcript.ToolRecord) {
	for _, r := range recs {
		s.Audit = append(s.Audit, r)
		a.log.Debug("tool call", "session", s.ID, "tool", r.Tool, "server", r.Server, "outcome", r.Outcome, "ms", r.DurationMS)
		if a.on != nil {
			a.on(r)
		}
	}
}
