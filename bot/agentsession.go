package bot

import "github.com/slack-go/slack/slackevents"

// onAgentSessionStopped stops the turn of a stopped agent session (to be
// built).
func (b *Bot) onAgentSessionStopped(team string, e *slackevents.AgentSessionStoppedEvent) {}
