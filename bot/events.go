package bot

import (
	"context"

	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/access"
	"agentbot/bot/workspace"
)

// onAgentEvent handles the Events API events of Slack's agent surface and
// App Home, and the membership events that invalidate what access knows:
// everything onEventsAPI does not treat as a message.
func (b *intake) onAgentEvent(ev slackevents.EventsAPIEvent) {
	ctx, installed := b.inWorkspace(eventWorkspace(ev), "")
	if !installed {
		return
	}
	id, _ := workspace.Of(ctx)
	team := id.Team
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppUninstalledEvent:
		b.uninstall(ctx, id)
	case *slackevents.TokensRevokedEvent:
		b.uninstall(ctx, id, e.Tokens.Bot...)
	case *slackevents.AppHomeOpenedEvent:
		b.learnChannel(e.Channel, id)
		b.home.beside(func() { b.home.onAppHomeOpened(ctx, team, e) })
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

// uninstall forgets the installation answering id: Slack says the app was
// uninstalled there (app_uninstalled,
// https://docs.slack.dev/reference/events/app_uninstalled) or its tokens
// revoked (tokens_revoked, https://docs.slack.dev/reference/events/tokens_revoked:
// only when the bot's own is among them). Later events of that workspace
// are ignored. With a single token there is nothing to forget: the
// operator's token is the operator's.
func (b *intake) uninstall(ctx context.Context, id workspace.ID, botUsers ...string) {
	u, ok := b.clients.(workspace.Uninstaller)
	if !ok {
		b.log.Warn("slack says the app was uninstalled or its tokens revoked; SLACK_BOT_TOKEN no longer works", "team", id.Team)
		return
	}
	if err := u.Uninstall(ctx, id, botUsers...); err != nil {
		b.log.Error("forget the installation", "team", id.Team, "enterprise", id.Enterprise, "err", err)
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

// eventWorkspace is the workspace an event is answered in: its team_id and
// enterprise_id, completed from its authorizations, the installation it
// was delivered for (https://docs.slack.dev/apis/events-api/#authorizations:
// an org-wide install's events may carry no enterprise_id beside the
// authorization that names it, with is_enterprise_install).
func eventWorkspace(ev slackevents.EventsAPIEvent) workspace.ID {
	id := workspace.ID{Team: ev.TeamID, Enterprise: ev.EnterpriseID}
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok || len(cb.Authorizations) == 0 {
		return id
	}
	a := cb.Authorizations[0]
	if id.Enterprise == "" && a.EnterpriseID != "" {
		id.Enterprise = a.EnterpriseID
	}
	if id.Team == "" && !a.IsEnterpriseInstall {
		id.Team = a.TeamID
	}
	return id
}
