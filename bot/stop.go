package bot

import (
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/keys"
	"agentbot/bot/render"
)

// actionStop is the action id of the Stop button of a running turn
// (bot/render shows it).
const actionStop = render.ActionStop

// onStopClick stops the thread's running turn when someone clicks its Stop
// button; anyone who may talk to the bot there may.
func (b *intake) onStopClick(team, channel, thread, user string, dm bool) {
	if why := b.denied(user, team, channel); why != "" {
		b.ephemeral(channel, user, thread, why)
		return
	}
	if !b.running.Stop(keys.Thread{Team: team, Channel: channel, Thread: thread}.String(), user) {
		b.ephemeral(channel, user, thread, "Nothing is running in this thread now.")
	}
}

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
