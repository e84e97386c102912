package bot

import (
	"context"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/keys"
)

// stopNote is what the transcript records when a user stops a turn.
const stopNote = "(The user stopped this turn here. Continue from what was said so far when they write again.)"

// onAgentSessionStopped stops the turn of a session whose stop button the
// user pressed in Slack's agent surface.
func (b *intake) onAgentSessionStopped(team string, e *slackevents.AgentSessionStoppedEvent) {
	key := keys.Thread{Team: team, Channel: e.Channel, Thread: e.ThreadTimestamp}
	if !b.running.Stop(key.String(), e.User) {
		b.log.Debug("stop: no running turn", "channel", e.Channel)
	}
}

// stopIfAsked stops the thread's running turn when a message asks for it
// ("stop", "@agentbot stop"), and reports whether it did.
func (b *intake) stopIfAsked(it item) bool {
	t := strings.ToLower(strings.Trim(strings.TrimSpace(it.Text), "!. "))
	if t != "stop" && t != "cancel" {
		return false
	}
	if !b.running.Stop(it.thread().String(), it.User) {
		return false
	}
	// app_mention and message.* both carry "@agentbot stop": once the turn
	// has ended, the other one must not reach the queue as a message.
	b.seen(keys.Message(it.Channel, it.TS))
	return true
}

// setSessionStatus shows the thread's agent session as processing or
// active; a failure is logged and never affects the turn.
func (b *core) setSessionStatus(ctx context.Context, it item, status string) {
	_, err := b.cfg.API.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
		Status: status, ChannelID: it.Channel, ThreadTS: it.ThreadTS, InitiatorUserID: it.User})
	if err != nil {
		b.log.Debug("agent session status", "status", status, "err", err)
	}
}
