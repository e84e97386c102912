package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/access"
	"agentbot/bot/slackmd"
	"agentbot/bot/view"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Projects: every thread of a channel shares the channel's project (its
// documents), or the named project an admin bound the channel to; a DM's
// project is its person's alone. /agent project shows it, `use NAME`
// binds the channel to a project and `new NAME` creates one and binds
// the channel to it.

// projectOf is the project a channel's threads share.
func (b *core) projectOf(ctx context.Context, team, channel string) string {
	p, err := storage.BoundProject(ctx, b.cfg.Store, team, channel)
	if err != nil {
		b.log.Error("project: read the channel's binding", "err", err)
	}
	return p
}

// slashProject answers /agent project [use NAME | new NAME].
func (b *slash) slashProject(cmd slack.SlashCommand, team string, args []string) {
	op := ""
	if len(args) > 0 {
		op = strings.ToLower(args[0])
	}
	switch {
	case op == "" || op == "show":
		thing := in(team, cmd.ChannelID)
		if access.IsDM(cmd.ChannelID) {
			thing.Owner = cmd.UserID // a slash command in a DM with the bot comes from its person
		}
		if ans := b.may(b.turnCtx, cmd.UserID, access.See, thing); !ans.OK {
			b.respond(cmd, ans.Why)
			return
		}
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
func (b *slash) projectText(team, channel string) string {
	p := view.Project{Name: b.projectOf(b.turnCtx, team, channel), Channel: channel}
	docs, err := b.cfg.Store.Documents(b.turnCtx, p.Name)
	if err != nil {
		b.log.Error("project: list documents", "project", p.Name, "err", err)
		return "⚠️ I couldn't read this channel's project. Please try again."
	}
	p.Docs, p.Own = docs, p.Name == storage.ChannelProject(team, channel)
	if !p.Own {
		if chans, err := b.cfg.Store.BoundChannels(b.turnCtx, p.Name); err == nil {
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
func (b *slash) bindProject(cmd slack.SlashCommand, team, name string, create bool) string {
	if why := b.notAdmin(cmd, team); why != "" {
		return why
	}
	if strings.HasPrefix(cmd.ChannelID, "D") {
		return "A direct message's project is yours alone: it can't be bound to another project."
	}
	if err := storage.CheckUserProjectName(name); err != nil {
		return "That name won't do: " + err.Error() + "."
	}
	_, err := storage.FindProject(b.turnCtx, b.cfg.Store, name)
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
		if err := b.cfg.Store.CreateProject(b.turnCtx, storage.Project{Name: name}); err != nil {
			b.log.Error("project: create", "err", err)
			return "⚠️ I couldn't create the project. Please try again."
		}
	}
	if err := b.cfg.Store.BindChannel(b.turnCtx, team+"/"+cmd.ChannelID, name); err != nil {
		b.log.Error("project: bind", "err", err)
		return "⚠️ I couldn't bind this channel. Please try again."
	}
	return fmt.Sprintf("This channel now shares the project *%s*: its threads read and write its documents. The channel's own documents stay in its own project.", name)
}

// privateApproval decides a binding that would open a private channel's
// documents to people outside it (access.Bind): when this channel, a
// channel bound to the project, or any channel that ever wrote one of its
// documents is private (or unknown, or of another workspace), only
// someone who is a member of all of them may approve. The person binding
// approves it when they are; otherwise the bot asks the channel for that
// approval with a button. "" lets the binding go on.
func (b *slash) privateApproval(team string, cmd slack.SlashCommand, project string) string {
	channels, err := b.channelsInvolved(team, cmd.ChannelID, project)
	if err != nil {
		b.log.Error("project: the channels of a binding", "err", err)
		return "⚠️ I couldn't read the project's channels. Please try again."
	}
	thing := in(team, cmd.ChannelID)
	thing.Sources = channels
	ans := b.may(b.turnCtx, cmd.UserID, access.Bind, thing)
	if ans.OK {
		return ""
	}
	if slices.ContainsFunc(channels, func(c access.Channel) bool { return c.ID == access.UnknownChannel }) || ans.Rule != ruleSources {
		return ans.Why
	}
	text, blocks := view.BindRequest(cmd.UserID, project, cmd.ChannelID, channelIDs(channels))
	_, err = b.postMsg(b.turnCtx, cmd.ChannelID, "", slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	if err != nil {
		b.log.Warn("project: ask for approval", "err", err)
		return fmt.Sprintf("A private channel's documents are shared only with the approval of someone who is a member of every one of %s, and you are not. Ask someone who is to run `/agent project use %s`.", access.ChannelList(channels), project)
	}
	return fmt.Sprintf("You are not a member of every one of %s, so I asked this channel for the approval of someone who is.", access.ChannelList(channels))
}

// ruleSources is the access rule a binding needs beyond the admin's.
const ruleSources = "member of every private channel"

// channelsInvolved are the channels a binding of a team's channel to a
// project joins, channel first: the channels bound to the project now
// (of every workspace of an org) and every channel that ever wrote one of
// its documents (storage.Projects.ProjectSources; one that cannot be
// known is access.UnknownChannel), so unbinding a private channel never
// makes its earlier documents public.
func (b *slash) channelsInvolved(team, channel, project string) ([]access.Channel, error) {
	bound, err := b.cfg.Store.BoundChannels(b.turnCtx, project)
	if err != nil {
		return nil, err
	}
	sources, err := b.cfg.Store.ProjectSources(b.turnCtx, project)
	if err != nil {
		return nil, err
	}
	channels := []access.Channel{{Team: team, ID: channel}}
	for _, s := range slices.Concat(bound, sources) {
		c, ok := access.ParseChannel(s)
		if !ok {
			c = access.Channel{ID: access.UnknownChannel} // unreadable: says no
		}
		if !slices.Contains(channels, c) {
			channels = append(channels, c)
		}
	}
	return channels, nil
}

// channelIDs are the ids of channels.
func channelIDs(channels []access.Channel) []string {
	ids := make([]string, len(channels))
	for i, c := range channels {
		ids[i] = c.ID
	}
	return ids
}

// onBindButton approves a binding for someone who may (access.Bind,
// asked again at the click, the allowlist included), and says so in place
// of the request. The button must sit on the bot's own request in the
// channel it binds.
func (b *slash) onBindButton(c click) bool {
	project, channel, _ := strings.Cut(c.value, "|")
	if channel != c.channel || !c.onBotRequest {
		b.ephemeral(c.channel, c.user, "", "⚠️ This button doesn't belong to a binding request of this channel.")
		return false
	}
	channels, err := b.channelsInvolved(c.team, channel, project)
	if err == nil {
		_, err = storage.FindProject(b.turnCtx, b.cfg.Store, project)
	}
	if err != nil {
		b.ephemeral(c.channel, c.user, "", "⚠️ I couldn't read the project "+project+". Please try again.")
		return false
	}
	thing := in(c.team, channel)
	thing.Sources = channels
	if ans := b.may(b.turnCtx, c.user, access.Bind, thing); !ans.OK {
		b.ephemeral(c.channel, c.user, "", ans.Why)
		return false
	}
	if err := b.cfg.Store.BindChannel(b.turnCtx, c.team+"/"+channel, project); err != nil {
		b.log.Error("project: bind", "err", err)
		b.ephemeral(c.channel, c.user, "", "⚠️ I couldn't bind this channel. Please try again.")
		return false
	}
	text := fmt.Sprintf("<@%s> approved: this channel now shares the project *%s* with %s.", c.user, project, access.ChannelList(channels[1:]))
	if _, _, _, err := b.api(b.inChannel(b.turnCtx, c.channel)).UpdateMessageContext(b.turnCtx, c.channel, c.messageTS, slack.MsgOptionText(slackmd.EscapeText(text), false), slack.MsgOptionBlocks()); err != nil {
		b.log.Warn("project: update the approval request", "err", err)
	}
	return false
}

// homeProjects is how many projects the Home tab lists documents of.
const homeProjects = 3

// homeProjectBlocks lists, for the Home tab, the documents of the projects
// of a user's recent sessions (at most homeProjects; view.ProjectBlocks).
func (b *home) homeProjectBlocks(ctx context.Context, sessions []*transcript.Session) []slack.Block {
	var names []string
	for _, s := range sessions {
		team, channel, ok := storage.SlackChannel(s.Key)
		if !ok {
			continue
		}
		if p := b.projectOf(ctx, team, channel); !slices.Contains(names, p) && len(names) < homeProjects {
			names = append(names, p)
		}
	}
	var projects []view.ProjectDocs
	for _, name := range names {
		if docs, err := b.cfg.Store.Documents(ctx, name); err == nil {
			projects = append(projects, view.ProjectDocs{Name: name, Docs: docs})
		}
	}
	return view.ProjectBlocks(projects)
}
