package view

import (
	"fmt"
	"path"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
)

// HomeSession is one of a person's recent sessions as the Home tab lists
// it.
type HomeSession struct {
	Session *transcript.Session
	// Workflow is what the session runs (a skill or a workflow); "" when
	// nothing.
	Workflow string
	// InThread is set when its key names a Slack thread: Channel and
	// Thread locate it.
	InThread        bool
	Channel, Thread string
}

// Home is a person's Home tab: the agents to start a DM session with (as
// many as the view has room for, the rest counted), the person's recent
// sessions, then projects (ProjectBlocks).
func Home(agents []*catalog.Agent, sessions []HomeSession, projects []slack.Block) []slack.Block {
	// A view holds 100 blocks: four go to the headers, the divider and the
	// overflow line, each session (or the empty note) takes one, and the
	// projects' documents theirs.
	room := MaxHomeBlocks - 4 - max(len(sessions), 1) - len(projects)
	shown := agents[:min(len(agents), room)]
	blocks := []slack.Block{header("Agents")}
	origins := PersonaOrigins(shown) // repeated personas told apart
	for i, a := range shown {
		blocks = append(blocks, homeAgent(a, origins[i]))
	}
	if n := len(agents) - len(shown); n > 0 {
		blocks = append(blocks, hint("more-agents", fmt.Sprintf("…and %d more: `/agent list` names them all.", n)))
	}
	blocks = append(blocks, slack.NewDividerBlock(), header("Your recent sessions"))
	if len(sessions) == 0 {
		blocks = append(blocks, section("No sessions yet: start one above, or mention me in a channel."))
	}
	for _, s := range sessions {
		blocks = append(blocks, section(SessionLine(s)))
	}
	return append(blocks, projects...)
}

// homeAgent is an agent's section on the Home tab, with its button.
func homeAgent(a *catalog.Agent, origin string) slack.Block {
	text := fmt.Sprintf("%s *%s*", a.Icon, slackmd.EscapeText(a.Name))
	if a.Title != "" && a.Title != a.Name {
		text += " — " + slackmd.EscapeText(a.Title)
	}
	if origin != "" {
		text += " (" + slackmd.EscapeText(origin) + ")"
	}
	if d := strings.TrimSpace(a.Description); d != "" {
		text += "\n" + slackmd.EscapeText(slackmd.Shorten(d, 200))
	}
	btn := slack.NewButtonBlockElement(ActionHome+":"+a.ID, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Start a session", false, false))
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.TrimSpace(text), false, false), nil, slack.NewAccessory(btn))
}

// SessionLine renders a session for the Home tab: agent, workflow, last
// activity, a link to its thread, and its documents.
func SessionLine(hs HomeSession) string {
	s := hs.Session
	name := s.AgentID
	if s.Agent != nil {
		name = strings.TrimSpace(s.Agent.Icon + " " + s.Agent.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%s*", slackmd.EscapeText(name))
	if hs.Workflow != "" {
		fmt.Fprintf(&b, " · %s", slackmd.EscapeText(hs.Workflow))
	}
	fmt.Fprintf(&b, " · last active %s", s.Updated.UTC().Format("2006-01-02 15:04 UTC"))
	if hs.InThread {
		fmt.Fprintf(&b, " · <https://slack.com/archives/%s/p%s|open the thread>", hs.Channel, strings.ReplaceAll(hs.Thread, ".", ""))
	}
	if latest := transcript.Documents(s.Outputs); len(latest) > 0 {
		b.WriteString("\nDocuments:")
		for i, o := range latest {
			doc := fmt.Sprintf(" %s (v%d)", slackmd.EscapeText(path.Base(o.Path)), o.Shown())
			more := fmt.Sprintf(" …and %d more", len(latest)-i)
			if Runes(b.String())+Runes(doc)+1+Runes(more) > MaxSectionText { // a section's text limit
				b.WriteString(more)
				break
			}
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(doc)
		}
	}
	return b.String()
}

// ProjectDocs are a project's documents, most recently changed first.
type ProjectDocs struct {
	Name string
	Docs []transcript.DocVersion
}

// ProjectBlocks lists projects' documents for the Home tab, with version
// and author: a header, then one section per project that has any; none
// when no project has.
func ProjectBlocks(projects []ProjectDocs) []slack.Block {
	var blocks []slack.Block
	for _, p := range projects {
		if len(p.Docs) > 0 {
			blocks = append(blocks, section(projectDocsText(p.Name, p.Docs)))
		}
	}
	if len(blocks) == 0 {
		return nil
	}
	return append([]slack.Block{header("Project documents")}, blocks...)
}

// projectDocsText is one project's documents for the Home tab, within a
// section's text limit.
func projectDocsText(name string, docs []transcript.DocVersion) string {
	var sb strings.Builder
	title := name
	if _, channel, ok := strings.Cut(strings.TrimPrefix(name, "channel/"), "/"); ok && strings.HasPrefix(name, "channel/") {
		title = "<#" + channel + ">"
		if strings.HasPrefix(channel, "D") {
			title = "your direct messages"
		}
	}
	fmt.Fprintf(&sb, "*%s* · %s", title, DocumentCount(len(docs)))
	for i, d := range docs {
		line := fmt.Sprintf("\n• `%s` v%d — %s, %s", slackmd.EscapeText(d.Path), d.Version, DocAuthor(d), d.Time.UTC().Format("2006-01-02 15:04"))
		more := fmt.Sprintf("\n…and %d more", len(docs)-i)
		if Runes(sb.String())+Runes(line)+Runes(more) > MaxSectionText {
			sb.WriteString(more)
			break
		}
		sb.WriteString(line)
	}
	return sb.String()
}
