package bot

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine/transcript"
)

// actionHome is the Home tab's button that starts a DM session with an
// agent; value: the agent id.
const actionHome = "home"

// homeSessions is how many of a user's sessions the Home tab lists.
const homeSessions = 10

// refreshHome publishes a user's Home tab: the agents to start a DM
// session with, then the user's most recent sessions with their documents.
func (b *Bot) refreshHome(ctx context.Context, user string) {
	if user == "" {
		return
	}
	mu, _ := b.homeLocks.LoadOrStore(user, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	sessions := b.recentSessions(user, homeSessions)
	agents := b.cfg.Catalog().EntryPoints()
	projects := b.homeProjectBlocks(sessions) // projects.go
	// A view holds 100 blocks: four go to the headers, the divider and the
	// overflow line, each session (or the empty note) takes one, and the
	// projects' documents theirs.
	room := maxHomeBlocks - 4 - max(len(sessions), 1) - len(projects)
	shown := agents[:min(len(agents), room)]
	blocks := []slack.Block{slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, "Agents", false, false))}
	origins := personaOrigins(shown) // repeated personas told apart
	for i, a := range shown {
		text := fmt.Sprintf("%s *%s*", a.Icon, slackmd.EscapeText(a.Name))
		if a.Title != "" && a.Title != a.Name {
			text += " — " + slackmd.EscapeText(a.Title)
		}
		if origins[i] != "" {
			text += " (" + slackmd.EscapeText(origins[i]) + ")"
		}
		if d := strings.TrimSpace(a.Description); d != "" {
			text += "\n" + slackmd.EscapeText(shorten(d, 200))
		}
		btn := slack.NewButtonBlockElement(actionHome+":"+a.ID, a.ID, slack.NewTextBlockObject(slack.PlainTextType, "Start a session", false, false))
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.TrimSpace(text), false, false), nil, slack.NewAccessory(btn)))
	}
	if n := len(agents) - len(shown); n > 0 {
		blocks = append(blocks, slack.NewContextBlock("more-agents", slack.NewTextBlockObject(slack.MarkdownType,
			fmt.Sprintf("…and %d more: `/agent list` names them all.", n), false, false)))
	}
	blocks = append(blocks, slack.NewDividerBlock(),
		slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, "Your recent sessions", false, false)))
	if len(sessions) == 0 {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "No sessions yet: start one above, or mention me in a channel.", false, false), nil, nil))
	}
	for _, s := range sessions {
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, sessionLine(s), false, false), nil, nil))
	}
	blocks = append(blocks, projects...)
	_, err := b.cfg.API.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: user,
		View: slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}})
	if err != nil && !b.web().Refused("views.publish", err) {
		b.log.Warn("publish home tab", "err", err)
	}
}

// sessionLine renders a session for the Home tab: agent, workflow, last
// activity, a link to its thread, and its documents.
func sessionLine(s *transcript.Session) string {
	name := s.AgentID
	if s.Agent != nil {
		name = strings.TrimSpace(s.Agent.Icon + " " + s.Agent.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%s*", slackmd.EscapeText(name))
	if w := activeSkill(s); w != "" {
		fmt.Fprintf(&b, " · %s", slackmd.EscapeText(w))
	} else if st, _ := stateOf(s); st.Workflow != "" {
		fmt.Fprintf(&b, " · %s", slackmd.EscapeText(st.Workflow))
	}
	fmt.Fprintf(&b, " · last active %s", s.Updated.UTC().Format("2006-01-02 15:04 UTC"))
	if k, ok := parseThreadKey(s.Key); ok {
		fmt.Fprintf(&b, " · <https://slack.com/archives/%s/p%s|open the thread>", k.Channel, strings.ReplaceAll(k.Thread, ".", ""))
	}
	if latest := transcript.Documents(s.Outputs); len(latest) > 0 {
		b.WriteString("\nDocuments:")
		for i, o := range latest {
			doc := fmt.Sprintf(" %s (v%d)", slackmd.EscapeText(path.Base(o.Path)), o.Version)
			more := fmt.Sprintf(" …and %d more", len(latest)-i)
			if runes(b.String())+runes(doc)+1+runes(more) > maxSectionText { // a section's text limit
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

// recentSessions returns the user's sessions, most recent first, at most n.
func (b *Bot) recentSessions(user string, n int) []*transcript.Session {
	list, err := b.cfg.Store.ListSessions()
	if err != nil {
		b.log.Debug("list sessions for the home tab", "err", err)
		return nil
	}
	var out []*transcript.Session
	for _, info := range list {
		if len(out) == n {
			break
		}
		s, err := b.cfg.Store.FindSession(info.Key)
		if err != nil || s == nil || s.ID != info.ID || ownerOfRecord(s) != user {
			continue
		}
		out = append(out, s)
	}
	return out
}

// startFromHome starts a DM session with an agent for a Home tab click: it
// opens the user's DM with the bot, posts the thread's first message there
// and queues the pick, so the agent greets in that thread.
func (b *Bot) startFromHome(team, user, agentID string, ack func()) bool {
	ctx := b.turnCtx
	ch, _, _, err := b.cfg.API.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user}})
	if err != nil || ch == nil {
		b.log.Warn("open DM for the home tab", "err", err)
		return false
	}
	a, ok := b.findAgent(agentID)
	name := agentID
	if ok {
		name = strings.TrimSpace(a.Icon + " " + a.Name)
	}
	ts, err := b.postMsg(ctx, ch.ID, "", slack.MsgOptionText(slackmd.EscapeText("Starting a session with "+name+"…"), false))
	if err != nil {
		b.log.Warn("start a session from the home tab", "err", err)
		return false
	}
	return b.enqueue(item{Kind: kindPick, Team: team, Channel: ch.ID, ThreadTS: ts, User: user, DM: true, AgentID: agentID}, ack)
}
