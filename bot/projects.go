package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/bot/view"
	"agentbot/bot/webapi"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Projects: every thread of a channel shares the channel's project (its
// documents), or the named project an admin bound the channel to; a DM's
// project is its person's alone. /agent project shows it, `use NAME`
// binds the channel to a project and `new NAME` creates one and binds
// the channel to it.

// projectOf is the project a channel's threads share.
func (b *Bot) projectOf(team, channel string) string {
	p, err := storage.BoundProject(b.cfg.Store, team, channel)
	if err != nil {
		b.log.Error("project: read the channel's binding", "err", err)
	}
	return p
}

// slashProject answers /agent project [use NAME | new NAME].
func (b *Bot) slashProject(cmd slack.SlashCommand, team string, args []string) {
	op := ""
	if len(args) > 0 {
		op = strings.ToLower(args[0])
	}
	switch {
	case op == "" || op == "show":
		b.respond(cmd, b.projectText(team, cmd.ChannelID))
	case (op == "use" || op == "new") && len(args) == 2:
		if msg := b.bindProject(cmd, team, args[1], op == "new"); msg != "" {
			b.respond(cmd, msg)
		}
	default:
		b.respond(cmd, view.ProjectUsage)
	}
}

// projectText describes a channel's project (view.ProjectText).
func (b *Bot) projectText(team, channel string) string {
	p := view.Project{Name: b.projectOf(team, channel), Channel: channel}
	docs, err := b.cfg.Store.Documents(p.Name)
	if err != nil {
		b.log.Error("project: list documents", "project", p.Name, "err", err)
		return "⚠️ I couldn't read this channel's project. Please try again."
	}
	p.Docs, p.Own = docs, p.Name == storage.ChannelProject(team, channel)
	if !p.Own {
		if chans, err := b.cfg.Store.BoundChannels(p.Name); err == nil {
			p.Bound = chans
		}
	}
	return view.ProjectText(p)
}

// bindProject binds the channel to the project name (creating it first
// when create) for an admin, and returns what to answer. A DM is never
// bound, and when the channel or any channel of the project is private,
// the person binding must be a member of every one of them: their command
// is that member's approval.
func (b *Bot) bindProject(cmd slack.SlashCommand, team, name string, create bool) string {
	if !b.isAdmin(cmd.UserID) {
		return "Only workspace admins or the people in AGENTBOT_ADMINS can bind a channel to a project."
	}
	if strings.HasPrefix(cmd.ChannelID, "D") {
		return "A direct message's project is yours alone: it can't be bound to another project."
	}
	if err := storage.CheckUserProjectName(name); err != nil {
		return "That name won't do: " + err.Error() + "."
	}
	_, err := b.cfg.Store.Project(name)
	switch {
	case create && err == nil:
		return fmt.Sprintf("A project *%s* exists already: `/agent project use %s` binds this channel to it.", name, name)
	case !create && errors.Is(err, storage.ErrNotFound):
		return fmt.Sprintf("There is no project *%s*: `/agent project new %s` creates it for this channel.", name, name)
	case err != nil && !errors.Is(err, storage.ErrNotFound):
		b.log.Error("project: read", "err", err)
		return "⚠️ I couldn't read the project. Please try again."
	}
	if msg := b.privateApproval(team, cmd, name); msg != "" {
		return msg
	}
	if create {
		if err := b.cfg.Store.CreateProject(storage.Project{Name: name}); err != nil {
			b.log.Error("project: create", "err", err)
			return "⚠️ I couldn't create the project. Please try again."
		}
	}
	if err := b.cfg.Store.BindChannel(team+"/"+cmd.ChannelID, name); err != nil {
		b.log.Error("project: bind", "err", err)
		return "⚠️ I couldn't bind this channel. Please try again."
	}
	return fmt.Sprintf("This channel now shares the project *%s*: its threads read and write its documents. The channel's own documents stay in its own project.", name)
}

// privateApproval decides a binding that would open a private channel's
// documents to people outside it: when this channel or one already bound
// to the project is private (or unknown), only someone who is a member of
// all of them may approve. The person binding approves it when they are;
// otherwise the bot asks the channel for that approval with a button. ""
// lets the binding go on.
func (b *Bot) privateApproval(team string, cmd slack.SlashCommand, project string) string {
	channels, private, err := b.channelsInvolved(team, cmd.ChannelID, project)
	if err != nil {
		b.log.Error("project: bound channels", "err", err)
		return "⚠️ I couldn't read the project's channels. Please try again."
	}
	if !private || b.memberOfAll(channels, cmd.UserID) {
		return ""
	}
	text, blocks := view.BindRequest(cmd.UserID, project, cmd.ChannelID, channels)
	_, err = b.postMsg(b.turnCtx, cmd.ChannelID, "", slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	if err != nil {
		b.log.Warn("project: ask for approval", "err", err)
		return fmt.Sprintf("A private channel's documents are shared only with the approval of someone in both channels, and you are not a member of every one of %s. Ask someone who is to run `/agent project use %s`.", view.ChannelList(channels), project)
	}
	return fmt.Sprintf("You are not a member of every one of %s, so I asked this channel for the approval of someone who is.", view.ChannelList(channels))
}

// channelsInvolved are the channels a binding of channel to project
// joins (channel first), and whether any is private or unknown.
func (b *Bot) channelsInvolved(team, channel, project string) ([]string, bool, error) {
	bound, err := b.cfg.Store.BoundChannels(project)
	if err != nil {
		return nil, false, err
	}
	channels := []string{channel}
	for _, c := range bound {
		if t, id, _ := strings.Cut(c, "/"); t == team && id != channel {
			channels = append(channels, id)
		}
	}
	private := false
	for _, c := range channels {
		if p, err := b.isPrivate(b.turnCtx, c); err != nil || p {
			private = true
		}
	}
	return channels, private && len(channels) > 1, nil
}

// memberOfAll reports whether user is a member of every channel.
func (b *Bot) memberOfAll(channels []string, user string) bool {
	for _, c := range channels {
		if ok, err := b.isMember(b.turnCtx, c, user); err != nil || !ok {
			return false
		}
	}
	return true
}

// onBindButton approves a binding for someone who is a member of every
// channel involved (checked again at the click), and says so in place of
// the request.
func (b *Bot) onBindButton(c click, _ func()) bool {
	project, channel, _ := strings.Cut(c.value, "|")
	if channel != c.channel {
		return false
	}
	channels, _, err := b.channelsInvolved(c.team, channel, project)
	if err == nil {
		_, err = b.cfg.Store.Project(project)
	}
	if err != nil {
		b.ephemeral(c.channel, c.user, "", "⚠️ I couldn't read the project "+project+". Please try again.")
		return false
	}
	if !b.memberOfAll(channels, c.user) {
		b.ephemeral(c.channel, c.user, "", fmt.Sprintf("Only someone who is a member of every one of %s can approve this.", view.ChannelList(channels)))
		return false
	}
	if err := b.cfg.Store.BindChannel(c.team+"/"+channel, project); err != nil {
		b.log.Error("project: bind", "err", err)
		b.ephemeral(c.channel, c.user, "", "⚠️ I couldn't bind this channel. Please try again.")
		return false
	}
	text := fmt.Sprintf("<@%s> approved: this channel now shares the project *%s* with %s.", c.user, project, view.ChannelList(channels[1:]))
	if _, _, _, err := b.cfg.API.UpdateMessageContext(b.turnCtx, c.channel, c.messageTS, slack.MsgOptionText(slackmd.EscapeText(text), false), slack.MsgOptionBlocks()); err != nil {
		b.log.Warn("project: update the approval request", "err", err)
	}
	return false
}

// isPrivate reports whether a channel is private (or a DM); an error
// counts as private.
func (b *Bot) isPrivate(ctx context.Context, channel string) (bool, error) {
	p, err := webapi.IsPrivate(ctx, b.web(), channel)
	if err != nil {
		b.log.Warn("conversations.info", "channel", channel, "err", err)
	}
	return p, err
}

// isMember reports whether user is a member of channel.
func (b *Bot) isMember(ctx context.Context, channel, user string) (bool, error) {
	ok, err := webapi.IsMember(ctx, b.web(), channel, user)
	if err != nil {
		b.log.Warn("conversations.members", "channel", channel, "err", err)
	}
	return ok, err
}

// homeProjects is how many projects the Home tab lists documents of.
const homeProjects = 3

// homeProjectBlocks lists, for the Home tab, the documents of the projects
// of a user's recent sessions (at most homeProjects; view.ProjectBlocks).
func (b *Bot) homeProjectBlocks(sessions []*transcript.Session) []slack.Block {
	var names []string
	for _, s := range sessions {
		team, channel, ok := storage.SlackChannel(s.Key)
		if !ok {
			continue
		}
		if p := b.projectOf(team, channel); !slices.Contains(names, p) && len(names) < homeProjects {
			names = append(names, p)
		}
	}
	var projects []view.ProjectDocs
	for _, name := range names {
		if docs, err := b.cfg.Store.Documents(name); err == nil {
			projects = append(projects, view.ProjectDocs{Name: name, Docs: docs})
		}
	}
	return view.ProjectBlocks(projects)
}
