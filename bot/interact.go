package bot

import (
	"strings"

	"github.com/slack-go/slack"
)

// onInteraction handles button clicks: a menu button types its command in
// the thread, a picker button starts the thread with that agent, a feedback
// button is stored with the session, and a Stop button stops the thread's
// running turn. It reports whether ack was handed on, to be called once the
// click's item is persisted.
func (b *Bot) onInteraction(cb slack.InteractionCallback, ack func()) bool {
	if cb.Type != slack.InteractionTypeBlockActions {
		return false
	}
	channel := cb.Channel.ID
	if channel == "" {
		channel = cb.Container.ChannelID
	}
	thread := cb.Container.ThreadTs
	if thread == "" {
		thread = cb.Message.ThreadTimestamp
	}
	if thread == "" {
		thread = cb.Container.MessageTs
	}
	team := cb.Team.ID
	if team == "" {
		team = b.teamID
	}
	dm := strings.HasPrefix(channel, "D")
	for _, act := range cb.ActionCallback.BlockActions {
		kind, _, _ := strings.Cut(act.ActionID, ":")
		click := clickDedupe(cb, act)
		switch kind {
		case actionStop: // stopbutton.go
			b.onStopClick(team, channel, thread, cb.User.ID, dm)
			return false
		case actionApprove, actionDeny: // approval.go
			return b.onApprovalClick(team, channel, thread, cb.Container.MessageTs, cb.User.ID, kind, act.Value, dm, ack)
		case actionFeedback: // feedback.go
			return b.onFeedbackClick(team, channel, thread, cb.Container.MessageTs, cb.User.ID, act.Value, dm, ack, click...)
		case actionHome: // apphome.go: the Home tab has no channel
			if why := b.denied(cb.User.ID, "", true); why != "" {
				return false
			}
			if b.seen(click...) {
				return false // Slack's retry of a click already taken in
			}
			return b.startFromHome(team, cb.User.ID, act.Value, ack)
		}
		if kind != actionMenu && kind != actionPick {
			continue
		}
		if why := b.denied(cb.User.ID, channel, dm); why != "" {
			b.ephemeral(channel, cb.User.ID, thread, why)
			return false
		}
		it := item{Team: team, Channel: channel, ThreadTS: thread, User: cb.User.ID, DM: dm}
		switch kind {
		case actionMenu:
			it.Kind, it.Text = "message", act.Value
		case actionPick:
			it.Kind, it.AgentID, it.PickerTS = "pick", act.Value, cb.Container.MessageTs
		}
		return b.enqueue(it, ack, click...) // one action per click
	}
	return false
}

// clickDedupe is a click's dedupe key: Slack delivers an unacked
// interaction again with the same payload, so the action's action_ts (or
// the payload's trigger_id) names the click. None when the payload has
// neither.
func clickDedupe(cb slack.InteractionCallback, act *slack.BlockAction) []string {
	id := act.ActionTs
	if id == "" {
		id = cb.ActionTs
	}
	if id == "" {
		id = cb.TriggerID
	}
	if id == "" {
		return nil
	}
	return []string{"click/" + cb.Channel.ID + "/" + cb.User.ID + "/" + act.ActionID + "/" + id}
}
