package bot

import (
	"context"
	"strings"
	"sync"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// stopNote is what the transcript records when a user stops a turn.
const stopNote = "(The user stopped this turn here. Continue from what was said so far when they write again.)"

// runningTurn is a turn that can be stopped.
type runningTurn struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	by     string // who stopped it; "" while it runs
}

// stop cancels the turn once and records who stopped it.
func (t *runningTurn) stop(by string) {
	t.mu.Lock()
	if t.by == "" {
		t.by = by
	}
	t.mu.Unlock()
	t.cancel()
}

// stoppedBy says who stopped the turn, "" when nobody did.
func (t *runningTurn) stoppedBy() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.by
}

// turns registers the running turns by thread key.
type turns struct {
	mu sync.Mutex
	m  map[string]*runningTurn
}

// start registers a turn of key, cancelled by cancel.
func (r *turns) start(key string, cancel context.CancelFunc) *runningTurn {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]*runningTurn{}
	}
	t := &runningTurn{cancel: cancel}
	r.m[key] = t
	return t
}

// end unregisters a finished turn.
func (r *turns) end(key string, t *runningTurn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[key] == t {
		delete(r.m, key)
	}
}

// stop stops the running turn of key; it reports whether one ran.
func (r *turns) stop(key, by string) bool {
	r.mu.Lock()
	t := r.m[key]
	r.mu.Unlock()
	if t == nil {
		return false
	}
	t.stop(by)
	return true
}

// onAgentSessionStopped stops the turn of a session whose stop button the
// user pressed in Slack's agent surface.
func (b *Bot) onAgentSessionStopped(team string, e *slackevents.AgentSessionStoppedEvent) {
	key := threadKey{Team: team, Channel: e.Channel, Thread: e.ThreadTimestamp}
	if !b.running.stop(key.String(), e.User) {
		b.log.Debug("stop: no running turn", "channel", e.Channel)
	}
}

// isStopRequest reports whether a message asks to stop the thread's turn
// ("stop", "@agentbot stop"); it stops it when one runs.
func (b *Bot) isStopRequest(it item) bool {
	t := strings.ToLower(strings.Trim(strings.TrimSpace(it.Text), "!. "))
	if t != "stop" && t != "cancel" {
		return false
	}
	if !b.running.stop(it.thread().String(), it.User) {
		return false
	}
	// app_mention and message.* both carry "@agentbot stop": once the turn
	// has ended, the other one must not reach the queue as a message.
	b.seen(msgDedupe(it.Channel, it.TS))
	return true
}

// setSessionStatus shows the thread's agent session as processing or
// active; a failure is logged and never affects the turn.
func (b *Bot) setSessionStatus(ctx context.Context, it item, status string) {
	_, err := b.cfg.API.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
		Status: status, ChannelID: it.Channel, ThreadTS: it.ThreadTS, InitiatorUserID: it.User})
	if err != nil {
		b.log.Debug("agent session status", "status", status, "err", err)
	}
}
