package bot

import "github.com/slack-go/slack/slackevents"

// onAppHomeOpened answers the App Home being opened (to be built).
func (b *Bot) onAppHomeOpened(team string, e *slackevents.AppHomeOpenedEvent) {}

// onAppContextChanged records the channel a user looks at (to be built).
func (b *Bot) onAppContextChanged(team string, e *slackevents.AppContextChangedEvent) {}
