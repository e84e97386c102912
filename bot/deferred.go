package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"agentbot/bot/threadstate"
	"agentbot/engine"
	"agentbot/engine/transcript"
)

// Messages into a waiting thread: while the thread's tool calls wait for
// approval, only a person who may decide them (its owner, or a configured
// admin: access.Decide) moves the thread on; their new message
// supersedes the calls, denied in their name. Anyone else's message leaves
// the calls waiting: it is kept in the thread state (Deferred), the
// person is told when it will be answered, and it is answered in order
// as soon as the wait ends.

// deferWhileWaiting keeps j's message for after the wait when the thread
// waits on tool calls and its author may not decide them; it reports
// whether it did.
func (b *threadHandlers) deferWhileWaiting(ctx context.Context, j *job) bool {
	c, it := j.c, j.it
	if c.Live.AgentDef == nil || len(undecided(c.Live)) == 0 {
		return false
	}
	if b.mayDecide(it.User, it.Team, it.Channel, &c.Live.Session).OK {
		return false // the owner's (or an admin's) message supersedes the calls
	}
	data, err := json.Marshal(it)
	if err != nil {
		return false
	}
	b.setState(c.Live, func(st *threadstate.State) {
		st.Deferred = append(st.Deferred, threadstate.Input{Seq: j.seq, Item: data})
	})
	if !b.saveSession(ctx, c.Live, "keep a message for after the approval") {
		return false
	}
	var tools []string
	for _, a := range undecided(c.Live) {
		tools = append(tools, "`"+a.Tool+"`")
	}
	b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("<@%s>, this thread waits for %s to approve or deny %s. I'll answer your message right after.",
		it.User, b.approvers(&c.Live.Session), strings.Join(tools, ", ")))
	return true
}

// undecided lists the calls of s that wait for a decision.
func undecided(s *engine.Session) []transcript.Approval {
	var out []transcript.Approval
	for _, p := range s.Pending {
		if p.Decision == "" {
			out = append(out, p)
		}
	}
	return out
}

// answerDeferred answers the messages kept while the thread waited, in
// order, once nothing waits any more; each leaves the state after its
// turn ran.
func (b *threadHandlers) answerDeferred(ctx context.Context, c *engine.Conversation) {
	for ctx.Err() == nil && c.Live.AgentDef != nil && len(undecided(c.Live)) == 0 {
		list := b.state(c.Live).Deferred
		if len(list) == 0 {
			return
		}
		var it item
		if err := json.Unmarshal(list[0].Item, &it); err != nil {
			b.log.Warn("thread state: a deferred message does not read; dropped", "session", c.Live.ID, "err", err)
		} else if input, ok := b.turnInput(ctx, &job{c: c, it: it, seq: list[0].Seq}); ok {
			b.turns.runTurn(ctx, c, it, input)
		}
		seq := list[0].Seq
		b.setState(c.Live, func(st *threadstate.State) {
			if len(st.Deferred) > 0 && st.Deferred[0].Seq == seq {
				st.Deferred = st.Deferred[1:]
			}
		})
		if !b.saveSession(ctx, c.Live, "note a deferred message answered") {
			return
		}
	}
}
