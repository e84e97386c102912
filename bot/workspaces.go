package bot

import (
	"context"
	"errors"

	"agentbot/bot/workspace"
)

// Serving several workspaces (Config.Clients): each payload names its
// workspace (team_id, enterprise_id), which goes into the context its
// work runs under, so every Web API call of that work is made with that
// workspace's token (package workspace). The channels seen in payloads
// are remembered with their workspace, for the few calls made away from
// the payload's context (an ephemeral notice): channel ids are unique
// across workspaces.

// inWorkspace returns b.turnCtx carrying id, remembering channel's
// workspace; ok is false when agentbot serves several workspaces and is
// not installed in id's (an event that came after an uninstall): the
// payload is then logged and ignored.
func (b *core) inWorkspace(id workspace.ID, channel string) (ctx context.Context, ok bool) {
	if id.Team == "" {
		id.Team = b.teamID
	}
	ctx = workspace.With(b.turnCtx, id)
	if b.clients == nil {
		return ctx, true
	}
	if _, err := b.clients.For(ctx, id); err != nil {
		if errors.Is(err, workspace.ErrNotInstalled) {
			b.log.Info("payload of a workspace agentbot is not installed in; ignored", "team", id.Team, "enterprise", id.Enterprise)
		} else {
			b.log.Warn("payload of a workspace whose token cannot be had; ignored", "team", id.Team, "enterprise", id.Enterprise, "err", err)
		}
		return ctx, false
	}
	b.learnChannel(channel, id)
	if id.Enterprise != "" {
		b.teamOrgs.Put(id.Team, id.Enterprise)
	}
	return ctx, true
}

// otherWorkspace reports whether team is another workspace than ctx's,
// when agentbot serves several: what one workspace shows (the Home tab)
// holds nothing of another's, even for a person of both (an Enterprise
// Grid user). A single workspace has no other.
func (b *core) otherWorkspace(ctx context.Context, team string) bool {
	id, ok := workspace.Of(ctx)
	return b.clients != nil && ok && team != id.Team
}

// learnChannel remembers the workspace of channel.
func (b *core) learnChannel(channel string, id workspace.ID) {
	if b.clients != nil && channel != "" && id.Team != "" {
		b.channelWorkspaces.Put(channel, id)
	}
}

// inChannel is ctx naming channel's workspace: as it is when it names one
// already, else with the workspace remembered for channel.
func (b *core) inChannel(ctx context.Context, channel string) context.Context {
	if _, ok := workspace.Of(ctx); ok || b.clients == nil {
		return ctx
	}
	if id, ok := b.channelWorkspaces.Get(channel); ok {
		return workspace.With(ctx, id)
	}
	return ctx
}
