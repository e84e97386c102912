package bot

import (
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
