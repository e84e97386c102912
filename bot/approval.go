package bot

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/access"
	"agentbot/bot/keys"
	"agentbot/bot/threadstate"
	"agentbot/bot/view"
	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Approvals: a tool call whose policy is "ask" ends the engine's turn with
// the call pending in the session. The bot posts one message per pending
// call with Approve / Deny buttons; a click by the session's owner or an
// admin is queued in the thread like a message (kind "approval"), and the
// thread's worker records the decision (engine.Decide) and resumes the
// turn. A call left undecided for ApprovalTimeout is expired the same way,
// by an item the periodic sweep queues: whichever replica holds the
// thread's lease handles it, and a restart loses nothing, since the pending
// call is in the stored session and the click or expiry in the queue.

// defaultApprovalTimeout is Config.ApprovalTimeout's default.
const defaultApprovalTimeout = 15 * time.Minute

// findApproval returns the approval of s for the call a button names: by
// id, or by digest.
func findApproval(s *transcript.Session, call string) *transcript.Approval {
	if s == nil || call == "" {
		return nil
	}
	for i := range s.Pending {
		if id := s.Pending[i].CallID; id == call || keys.CallDigest(id) == call {
			return &s.Pending[i]
		}
	}
	return nil
}

// approvers names who may decide on a call of s: its owner and the admins.
func (b *core) approvers(s *transcript.Session) string {
	team, _, _ := storage.SlackChannel(s.Key)
	return access.Deciders(ownerOfRecord(s), team, b.cfg.Admins)
}

// mayDecide asks whether user may decide the tool calls of s, a session
// of a team's channel (access.Decide): its owner or a configured admin,
// who is a member of the channel now.
func (b *core) mayDecide(user, team, channel string, s *transcript.Session) access.Answer {
	thing := in(team, channel)
	thing.Owner = ownerOfRecord(s)
	return b.may(b.turnCtx, user, access.Decide, thing)
}

// ownerOfRecord is the owner in the thread state of a stored record (read
// without its transcript, on the ack path); "" when unreadable.
func ownerOfRecord(s *transcript.Session) string {
	st, _ := threadstate.Of(s)
	return st.Owner
}

// approvalMessage renders the message of call a of session s (view.ApprovalMessage).
func (b *core) approvalMessage(s *transcript.Session, a *transcript.Approval, line string) []slack.MsgOption {
	if a.Kind == transcript.GateConnect {
		return view.ConnectWaitMessage(s.Key, a, line)
	}
	return view.ApprovalMessage(s.Key, a, b.approvers(s), line)
}

// saveApprovalMessages sets the posted messages of s's approvals, keeping
// only the calls still in s.Pending, and stores them with the session's
// metadata only: the engine saved the transcript already.
func (b *turns) saveApprovalMessages(ctx context.Context, s *engine.Session, m map[string]string) {
	for id := range m {
		if findApproval(&s.Session, id) == nil {
			delete(m, id)
		}
	}
	b.setState(s, func(st *threadstate.State) { st.Approvals = m })
	if err := b.work.StoreMeta(ctx, &s.Session); err != nil {
		b.log.Error("save approval messages", "session", s.ID, "err", err)
	}
}

// askApprovals posts the approval requests of the calls a turn waits on,
// unless a person stopped it.
func (b *turns) askApprovals(ctx context.Context, t *threadTurn) {
	if t.res != nil && len(t.res.Pending) > 0 && t.r.stoppedBy == "" {
		b.postApprovals(ctx, t.c.Live, t.it, t.res.Pending)
	}
}

// postApprovals posts a message with Approve / Deny buttons for each
// pending call not shown yet, and remembers the messages in the session.
func (b *turns) postApprovals(ctx context.Context, s *engine.Session, it item, pending []transcript.Approval) {
	posted := b.state(s).Approvals
	if posted == nil {
		posted = map[string]string{}
	}
	changed := false
	for _, p := range pending {
		a := findApproval(&s.Session, p.CallID)
		if a == nil {
			a = &p
		}
		if _, ok := posted[a.CallID]; ok || a.Decision != "" {
			continue
		}
		ts, err := b.postGate(ctx, s, it, a)
		if err != nil {
			b.log.Error("post approval request", "session", s.ID, "tool", a.Tool, "err", err)
			continue
		}
		posted[a.CallID], changed = ts, true
	}
	if !changed {
		return
	}
	b.saveApprovalMessages(ctx, s, posted)
}

// postGate posts the message of pending call a: an approval request, or
// the note of a connect gate (with the link sent to its person alone).
func (b *turns) postGate(ctx context.Context, s *engine.Session, it item, a *transcript.Approval) (string, error) {
	if a.Kind == transcript.GateConnect {
		return b.postConnectGate(ctx, s, it, a)
	}
	return b.postMsg(ctx, it.Channel, it.ThreadTS, b.approvalMessage(&s.Session, a, "")...)
}

// onApprovalClick handles a click of Approve or Deny: someone who may not
// decide is told who may, ephemerally; an allowed click on a pending call
// is queued in the call's thread. It reports whether ack was handed on.
func (b *intake) onApprovalClick(team, channel, thread, messageTS, user, kind, value string, dm bool, ack func()) bool {
	if why := b.denied(user, team, channel); why != "" {
		b.ephemeral(channel, user, thread, why)
		return false
	}
	var v view.ApprovalValue
	if err := json.Unmarshal([]byte(value), &v); err != nil || v.Key != (keys.Thread{Team: team, Channel: channel, Thread: thread}).String() {
		b.log.Warn("approval click with a bad value", "channel", channel)
		b.ephemeral(channel, user, thread, "⚠️ This button doesn't belong to this thread.")
		return false
	}
	rec, err := b.cfg.Store.FindMeta(b.turnCtx, v.Key) // no transcript on the ack path
	if err != nil {
		b.log.Error("load session for an approval", "err", err)
		b.ephemeral(channel, user, thread, "⚠️ I couldn't open this thread's session. Please click again in a moment.")
		return false
	}
	a := findApproval(rec, v.Call)
	switch {
	case a == nil:
		b.ephemeral(channel, user, thread, "This tool call isn't waiting for approval any more.")
		return false
	case a.Decision != "":
		b.ephemeral(channel, user, thread, "This tool call was decided already: "+view.DecisionLine(a)+".")
		return false
	case a.Kind == transcript.GateConnect:
		// Nobody approves past a connection: only its person connects.
		b.ephemeral(channel, user, thread, "This call waits for <@"+a.Person+"> to connect their account at `"+a.Server+"`; only they can.")
		return false
	}
	if ans := b.mayDecide(user, team, channel, rec); !ans.OK {
		b.ephemeral(channel, user, thread, ans.Why)
		return false
	}
	decision := transcript.DecisionApproved
	if kind == view.ActionDeny {
		decision = transcript.DecisionDenied
	}
	it := item{Kind: kindApproval, Team: team, Channel: channel, ThreadTS: thread, TS: messageTS, User: user,
		Text: decision, CallID: a.CallID, DM: dm}
	return b.enqueue(it, ack, keys.Approval(v.Key, a.CallID))
}

// decide handles a queued decision under the thread's lease: it records
// it, updates the call's message, and resumes the turn once every pending
// call is decided.
func (b *threadHandlers) onDecision(ctx context.Context, j *job) {
	c, it := j.c, j.it
	s := c.Live
	a := findApproval(&s.Session, it.CallID)
	if a == nil {
		return // the turn moved on
	}
	if a.Decision != "" {
		b.updateApproval(ctx, s, it, a) // a replay: the message may not show it yet
		return
	}
	b.setState(s, func(st *threadstate.State) { st.Seq = j.seq }) // a crash from here replays as a resume
	if err := c.Decide(ctx, it.CallID, it.Text, it.User); err != nil {
		if errors.Is(err, engine.ErrNoPending) {
			return
		}
		b.log.Error("record approval", "session", s.ID, "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, "⚠️ I couldn't record that decision. Please try again.")
		return
	}
	if a = findApproval(&s.Session, it.CallID); a != nil {
		b.obs.ApprovalDecided(a.Decision)
		b.log.Info("tool call decided", "session", s.ID, "tool", a.Tool, "decision", a.Decision, "by", a.By)
		b.updateApproval(ctx, s, it, a)
	}
	b.resumeDecided(ctx, c, it) // once the others are decided too
}

// updateApproval shows the decision in the call's message, without buttons.
func (b *threadHandlers) updateApproval(ctx context.Context, s *engine.Session, it item, a *transcript.Approval) {
	ts := b.state(s).Approvals[a.CallID]
	if ts == "" {
		ts = it.TS
	}
	if ts == "" {
		return
	}
	if err := b.update(ctx, it.Channel, ts, b.approvalMessage(&s.Session, a, view.DecisionLine(a))...); err != nil {
		b.log.Warn("update approval message", "err", err)
	}
}

// waitingApprovals returns copies of the calls of s still waiting for a
// decision whose message was posted, with their messages.
func (b *turns) waitingApprovals(s *engine.Session) ([]transcript.Approval, map[string]string) {
	posted := b.state(s).Approvals
	var out []transcript.Approval
	for _, a := range s.Pending {
		if a.Decision == "" && posted[a.CallID] != "" {
			out = append(out, a)
		}
	}
	return out, posted
}

// closeSuperseded updates the messages of calls that were waiting before a
// turn and are no longer pending after it (a new message denied them), and
// forgets them.
func (b *turns) closeSuperseded(ctx context.Context, t *threadTurn) {
	s, it, before, posted := t.c.Live, t.it, t.waiting, t.waitingPosted
	if len(before) == 0 {
		return
	}
	for _, a := range before {
		if findApproval(&s.Session, a.CallID) != nil {
			continue
		}
		if err := b.update(ctx, it.Channel, posted[a.CallID], b.approvalMessage(&s.Session, &a, view.SupersededLine)...); err != nil {
			b.log.Warn("update approval message", "err", err)
		}
	}
	b.saveApprovalMessages(ctx, s, b.state(s).Approvals)
}

// approvalSweepEvery is how often pending calls are checked for expiry
// (the tick of threadwork.Work.StartPeriodic): the lease scan's cadence, or more
// often for a short timeout.
func (b *core) approvalSweepEvery() time.Duration {
	return max(min(b.cfg.LeaseTTL/3, b.cfg.ApprovalTimeout/4), 10*time.Millisecond)
}

// sweeper remembers the expiries it queued, so a call is queued once.
type sweeper struct {
	*core
	// queued are the expiries queued already (session key and call id).
	queued map[string]bool
}

// sweep queues an expiry for every overdue call of the sessions waiting
// for an approval (the store's index of them: no scan of every session).
func (sw *sweeper) sweep() {
	b := sw
	waiting, err := b.cfg.Store.WaitingSessions(b.turnCtx)
	if err != nil {
		b.log.Error("sweep pending approvals", "err", err)
		return
	}
	now := time.Now()
	for _, key := range waiting {
		rec, err := b.cfg.Store.FindMeta(b.turnCtx, key)
		if err != nil || rec == nil {
			continue
		}
		for _, a := range rec.Pending {
			if q := rec.Key + "\n" + a.CallID; a.Decision == "" && now.Sub(a.Asked) >= b.cfg.ApprovalTimeout && !sw.queued[q] {
				sw.queued[q] = true
				b.expire(rec, a)
			}
		}
	}
	if len(sw.queued) > 10000 {
		clear(sw.queued) // a later sweep queues again; the dedupe mark drops it
	}
}

// expire queues the expiry of pending call a of session rec in its thread.
func (sw *sweeper) expire(rec *transcript.Session, a transcript.Approval) {
	k, ok := keys.ParseThread(rec.Key)
	if !ok {
		sw.log.Error("expire a pending tool call: the session key names no thread", "session", rec.ID)
		return
	}
	it := item{Kind: kindApproval, Team: k.Team, Channel: k.Channel, ThreadTS: k.Thread,
		Text: transcript.DecisionExpired, CallID: a.CallID, DM: k.DM()}
	sw.enqueue(it, func() {}, keys.Approval(rec.Key, a.CallID))
}
