package bot

import (
	"context"

	"agentbot/bot/access"
)

// may asks the one authorization function (access.May) whether person may
// do action to thing; every entry point asks it. A refusal is logged
// with its rule, never with what was asked.
func (b *core) may(ctx context.Context, person string, action access.Action, thing access.Thing) access.Answer {
	a := access.May(ctx, b.slackACL, access.Config{AllowedUsers: b.cfg.AllowedUsers,
		AllowedChannels: b.cfg.AllowedChannels, Admins: b.cfg.Admins}, person, action, thing)
	if !a.OK {
		b.log.Info("refused", "person", person, "action", action, "rule", a.Rule, "channel", thing.Channel.ID)
	}
	return a
}

// denied says why person may not use the bot in a team's channel (or
// DM), or "" when they may (access.Use).
func (b *core) denied(person, team, channel string) string {
	return b.may(b.turnCtx, person, access.Use, in(team, channel)).Why
}

// in is the thing "a channel of a team".
func in(team, channel string) access.Thing {
	return access.Thing{Channel: access.Channel{Team: team, ID: channel}}
}
