package bot

import (
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/access"
)

// onAgentEvent handles the Events API events of Slack's agent surface and
// App Home, and the membership events that invalidate what access knows:
// everything onEventsAPI does not treat as a message.
func (b *intake) onAgentEvent(ev slackevents.EventsAPIEvent) {
	team := ev.TeamID
	if team == "" {
		team = b.teamID
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppHomeOpenedEvent:
		b.home.beside(func() { b.home.onAppHomeOpened(team, e) })
	case *slackevents.AppContextChangedEvent:
		b.home.onAppContextChanged(team, e)
	case *slackevents.AgentSessionStoppedEvent:
		b.onAgentSessionStopped(team, e)
	case *slackevents.MemberLeftChannelEvent:
		b.forgetChannel(team, e.Channel)
	case *slackevents.ChannelLeftEvent:
		b.forgetChannel(team, e.Channel)
	case *slackevents.GroupLeftEvent:
		b.forgetChannel(team, e.Channel)
	}
}

// forgetChannel drops what the bot knew of a channel's members and
// privacy: someone left it, or the bot did, so who may see its documents
// is asked of Slack again at once.
func (b *intake) forgetChannel(team, channel string) {
	if channel != "" {
		b.slackACL.Forget(access.Channel{Team: team, ID: channel})
	}
}
