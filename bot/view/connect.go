package view

import (
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/keys"
	"agentbot/bot/slackmd"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// The action ids (before ":") of the connect buttons. ActionConnectLink
// (on the thread's note) sends the person a fresh link; ActionConnectOpen
// is the link itself (a URL button, acknowledged and ignored);
// ActionConnectDecline declines. Their value is an ApprovalValue.
// ActionDisconnect (the Home tab) ends a connection; its value is the
// server's name.
const (
	ActionConnectLink    = "connect-link"
	ActionConnectOpen    = "connect-open"
	ActionConnectDecline = "connect-decline"
	ActionDisconnect     = "disconnect"
)

// connectDecisionLine is how the note of a connect gate ends once decided.
func connectDecisionLine(a *transcript.Approval) string {
	switch a.Decision {
	case transcript.DecisionApproved:
		return "✅ <@" + a.Person + "> connected `" + a.Server + "`"
	case transcript.DecisionDenied:
		if a.By == a.Person {
			return "⏭ <@" + a.Person + "> declined to connect `" + a.Server + "`; the agent goes on without it"
		}
		return "⏭ Not connected; the agent goes on without `" + a.Server + "`"
	case transcript.DecisionExpired:
		return "⌛ `" + a.Server + "` was not connected in time; the agent goes on without it"
	}
	return ""
}

// ConnectedLine ends the note of a connect gate whose person connected
// and whose call now waits for approval.
func ConnectedLine(a *transcript.Approval) string {
	return "✅ <@" + a.Person + "> connected `" + a.Server + "`; the call now waits for approval"
}

// ConnectWaitMessage is the thread's note on call a of session key, which
// waits for its person to connect their account at a.Server: visible to
// everyone, with no link (the link goes to the person alone); a button
// sends the person a fresh link. With line, the note says how it ended
// and has no button.
func ConnectWaitMessage(key string, a *transcript.Approval, line string) []slack.MsgOption {
	md := fmt.Sprintf("🔌 To run %s, <@%s> needs to connect their account at `%s`, so that the agent acts as them there.", toolLabel(a), a.Person, a.Server)
	blocks := []slack.Block{slackmd.Block(md)}
	fallback := "Waiting for a connection to " + slackmd.Shorten(a.Server, 100)
	if line != "" {
		fallback = line
		blocks = append(blocks, slack.NewContextBlock("decision", slack.NewTextBlockObject(slack.MarkdownType, line, false, false)))
		return []slack.MsgOption{slack.MsgOptionText(fallback, false), slack.MsgOptionBlocks(blocks...)}
	}
	id := keys.CallDigest(key + "\n" + a.CallID)[7:19]
	again := slack.NewButtonBlockElement(ActionConnectLink+":"+id, buttonValue(key, a.CallID),
		slack.NewTextBlockObject(slack.PlainTextType, "Send me the link again", true, false))
	blocks = append(blocks,
		slack.NewActionBlock("connect", again),
		slack.NewContextBlock("waiting", slack.NewTextBlockObject(slack.MarkdownType,
			"⏸ Waiting for <@"+a.Person+">: I sent them a private link. Nobody else can connect for them.", false, false)))
	return []slack.MsgOption{slack.MsgOptionText(fallback, false), slack.MsgOptionBlocks(blocks...)}
}

// ConnectLinkMessage is the ephemeral message that gives the person of
// call a the link to connect their account at a.Server (link), valid for
// ttl and once, and a button to decline.
func ConnectLinkMessage(key string, a *transcript.Approval, link string, ttl time.Duration) []slack.MsgOption {
	md := fmt.Sprintf("🔌 The agent needs your account at `%s` to run %s for you. Connect it: the link is yours alone, works once, and expires in %s. Your token is stored encrypted, and only your own requests use it; `/agent disconnect %s` ends it.",
		a.Server, toolLabel(a), ttlText(ttl), a.Server)
	id := keys.CallDigest(key + "\n" + a.CallID)[7:19]
	open := slack.NewButtonBlockElement(ActionConnectOpen+":"+id, "", slack.NewTextBlockObject(slack.PlainTextType, "Connect "+slackmd.Shorten(a.Server, 60), true, false))
	open.URL, open.Style = link, slack.StylePrimary
	decline := slack.NewButtonBlockElement(ActionConnectDecline+":"+id, buttonValue(key, a.CallID), slack.NewTextBlockObject(slack.PlainTextType, "Not now", true, false))
	return []slack.MsgOption{
		slack.MsgOptionText("Connect your account at "+slackmd.Shorten(a.Server, 100), false),
		slack.MsgOptionBlocks(slackmd.Block(md), slack.NewActionBlock("connect", open, decline)),
	}
}

// ServiceLinkMessage is the ephemeral message that gives an admin the link
// to connect a server's service identity (/agent connect SERVER
// --service), or a person the link to connect their own account ahead of
// time (/agent connect SERVER).
func ServiceLinkMessage(server, link string, service bool, ttl time.Duration) []slack.MsgOption {
	md := fmt.Sprintf("🔌 Connect your account at `%s`: the link is yours alone, works once, and expires in %s.", server, ttlText(ttl))
	if service {
		md = fmt.Sprintf("🔌 Connect the *service identity* of `%s`: everyone whose agents use this server will act as the account you sign in with. The link works once and expires in %s.", server, ttlText(ttl))
	}
	open := slack.NewButtonBlockElement(ActionConnectOpen+":"+keys.CallDigest(server)[7:19], "", slack.NewTextBlockObject(slack.PlainTextType, "Connect "+slackmd.Shorten(server, 60), true, false))
	open.URL, open.Style = link, slack.StylePrimary
	return []slack.MsgOption{
		slack.MsgOptionText("Connect "+slackmd.Shorten(server, 100), false),
		slack.MsgOptionBlocks(slackmd.Block(md), slack.NewActionBlock("connect", open)),
	}
}

// ttlText says a duration in minutes, or seconds under a minute.
func ttlText(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d seconds", int(d.Seconds()))
	}
	return fmt.Sprintf("%d minutes", int(d.Minutes()))
}

// maxHomeConnections bounds the connections the Home tab lists (a view
// holds 100 blocks); /agent connections lists them all.
const maxHomeConnections = 10

// HomeConnections are the Home tab's blocks for a person's connections:
// one section per connection with a Disconnect button; none when there
// are none.
func HomeConnections(mine []storage.CredentialInfo, now time.Time) []slack.Block {
	if len(mine) == 0 {
		return nil
	}
	blocks := []slack.Block{slack.NewDividerBlock(), header("Your connections")}
	for _, c := range mine[:min(len(mine), maxHomeConnections)] {
		btn := slack.NewButtonBlockElement(ActionDisconnect+":"+keys.CallDigest(c.Server)[7:19], c.Server,
			slack.NewTextBlockObject(slack.PlainTextType, "Disconnect", true, false))
		btn.Style = slack.StyleDanger
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, connectionLine(c, now), false, false), nil,
			slack.NewAccessory(btn)))
	}
	return blocks
}
