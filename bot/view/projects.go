package view

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine/transcript"
)

// ProjectUsage is what /agent project answers to what it does not know.
const ProjectUsage = "`/agent project` shows this channel's project · `/agent project use <name>` binds this channel to a project · `/agent project new <name>` creates one for this channel (admins)"

// maxProjectLines bounds the documents /agent project lists.
const maxProjectLines = 20

// Project is a channel's project as /agent project shows it.
type Project struct {
	// Name is the project; Own is set when it is the channel's own.
	Name string
	Own  bool
	// Channel is the channel asked about; Bound, for a named project, the
	// channels bound to it ("team/channel").
	Channel string
	Bound   []string
	// Docs are its documents, most recently changed first.
	Docs []transcript.DocVersion
}

// ProjectText describes a channel's project: its name, the channels bound
// to it, and its documents, most recently changed first.
func ProjectText(p Project) string {
	var sb strings.Builder
	switch {
	case p.Own && strings.HasPrefix(p.Channel, "D"):
		sb.WriteString("Your direct messages with me are your own project, no one else's")
	case p.Own:
		sb.WriteString("This channel is its own project")
	default:
		fmt.Fprintf(&sb, "This channel's project is *%s*", p.Name)
		if len(p.Bound) > 1 {
			sb.WriteString(", shared with")
			for _, c := range p.Bound {
				if _, id, _ := strings.Cut(c, "/"); id != p.Channel {
					sb.WriteString(" <#" + id + ">")
				}
			}
		}
	}
	if len(p.Docs) == 0 {
		sb.WriteString(". It has no documents yet: what the agents save in any of its threads lands here.")
		return sb.String()
	}
	fmt.Fprintf(&sb, ". %s, last changed first:", DocumentCount(len(p.Docs)))
	for i, d := range p.Docs {
		if i == maxProjectLines {
			fmt.Fprintf(&sb, "\n… and %d more (`agentbot projects show %s`)", len(p.Docs)-i, p.Name)
			break
		}
		fmt.Fprintf(&sb, "\n• `%s` v%d — %s, %s", d.Path, d.Version, DocAuthor(d), d.Time.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return sb.String()
}

// BindRequest asks channel for the approval of binding it to project,
// asked by user, that joins channels: its plain text (escaped) and its
// blocks, with the Approve button.
func BindRequest(user, project, channel string, channels []string) (string, []slack.Block) {
	text := slackmd.EscapeText(fmt.Sprintf("<@%s> asks to share this channel's documents with the project *%s* (%s). A private channel's documents are shared only with the approval of someone who is a member of every one of these channels.",
		user, project, ChannelList(channels)))
	approve := slack.NewButtonBlockElement(ActionBind+":"+project, project+"|"+channel, slack.NewTextBlockObject(slack.PlainTextType, "Approve", false, false))
	return text, []slack.Block{section(text), slack.NewActionBlock("project-bind", approve)}
}

// ChannelList names channels for Slack: <#C1>, <#C2>.
func ChannelList(channels []string) string {
	var out []string
	for _, c := range channels {
		out = append(out, "<#"+c+">")
	}
	return strings.Join(out, ", ")
}
