package bot

import (
	"github.com/slack-go/slack/slackevents"
)

// onAgentEvent handles the Events API events of Slack's agent surface and
// App Home: everything onEventsAPI does not treat as a message.
func (b *Bot) onAgentEvent(ev slackevents.EventsAPIEvent) {
	team := ev.TeamID
	if team == "" {
		team = b.teamID
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppHomeOpenedEvent:
		b.onAppHomeOpened(team, e)
	case *slackevents.AppContextChangedEvent:
		b.onAppContextChanged(team, e)
	case *slackevents.AgentSessionStoppedEvent:
		b.onAgentSessionStopped(team, e)
	}
}
