package bot

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/access"
	"agentbot/bot/slackmd"
	"agentbot/bot/view"
	"agentbot/bot/webapi"
	"agentbot/bot/workspace"
	"agentbot/storage"
)

// slash answers /agent (slash.go, tools.go, projects.go) and the
// project binding's button.
type slash struct{ *core }

// onSlash answers /agent ephemerally. Slash commands never run in threads,
// so `use` sets the channel default.
func (b *slash) onSlash(cmd slack.SlashCommand) {
	ctx, installed := b.inWorkspace(workspace.ID{Team: cmd.TeamID, Enterprise: cmd.EnterpriseID}, cmd.ChannelID)
	if !installed {
		return
	}
	id, _ := workspace.Of(ctx)
	team := id.Team
	if why := b.denied(cmd.UserID, team, cmd.ChannelID); why != "" {
		b.respond(cmd, why)
		return
	}
	f := strings.Fields(cmd.Text)
	sub := ""
	if len(f) > 0 {
		sub = strings.ToLower(f[0])
	}
	run, ok := subcommands[sub]
	if !ok {
		b.respond(cmd, fmt.Sprintf("I don't know `/agent %s`.\n%s", sub, view.SlashHelp))
		return
	}
	run(b, cmd, team, f[min(len(f), 1):])
}

// subcommands are /agent's subcommands, by name; each gets the command,
// its team and the words after the subcommand.
var subcommands = map[string]func(b *slash, cmd slack.SlashCommand, team string, args []string){
	"":            func(b *slash, cmd slack.SlashCommand, _ string, _ []string) { b.respond(cmd, view.SlashHelp) },
	"help":        func(b *slash, cmd slack.SlashCommand, _ string, _ []string) { b.respond(cmd, view.SlashHelp) },
	"list":        func(b *slash, cmd slack.SlashCommand, _ string, _ []string) { b.respond(cmd, b.agentList()) },
	"use":         (*slash).slashUse,
	"status":      func(b *slash, cmd slack.SlashCommand, team string, _ []string) { b.slashStatus(cmd, team) },
	"reset":       func(b *slash, cmd slack.SlashCommand, team string, _ []string) { b.slashReset(cmd, team) },
	"reload":      func(b *slash, cmd slack.SlashCommand, team string, _ []string) { b.reload(cmd, team) },
	"tools":       (*slash).slashTools,
	"project":     (*slash).slashProject,
	"connections": func(b *slash, cmd slack.SlashCommand, team string, _ []string) { b.slashConnections(cmd, team) },
	"disconnect":  (*slash).slashDisconnect,
	"connect":     (*slash).slashConnect,
	"party":       func(b *slash, cmd slack.SlashCommand, team string, _ []string) { b.slashParty(cmd, team) },
}

// slashReset clears the channel's default agent (/agent reset).
func (b *slash) slashReset(cmd slack.SlashCommand, team string) {
	if err := storage.SetChannelDefault(b.turnCtx, b.cfg.Store, team, cmd.ChannelID, ""); err != nil {
		b.respond(cmd, "⚠️ I couldn't clear the channel default. Please try again.")
		return
	}
	b.respond(cmd, "This channel has no default agent now; a mention gets a picker.")
}

// slashUse makes an agent the channel's default (/agent use <agent>).
func (b *slash) slashUse(cmd slack.SlashCommand, team string, args []string) {
	if len(args) == 0 {
		b.respond(cmd, "Which agent? `/agent use <agent>` — "+b.agentList())
		return
	}
	a, ok := b.findAgent(args[0])
	if !ok {
		b.respond(cmd, fmt.Sprintf("I don't know the agent `%s`. %s", args[0], b.agentList()))
		return
	}
	if err := storage.SetChannelDefault(b.turnCtx, b.cfg.Store, team, cmd.ChannelID, a.ID); err != nil {
		b.log.Error("set channel default", "err", err)
		b.respond(cmd, "⚠️ I couldn't save the channel default. Please try again.")
		return
	}
	b.respond(cmd, fmt.Sprintf("%s *%s* (%s) is now this channel's default. Mention me in a message to start a thread with %s.", a.Icon, a.Name, a.ID, a.Name))
}

// slashStatus reports the channel's default agent, what is loaded, and the
// token budgets (/agent status).
func (b *slash) slashStatus(cmd slack.SlashCommand, team string) {
	def, _ := storage.ChannelDefault(b.turnCtx, b.cfg.Store, team, cmd.ChannelID)
	a, _ := b.findAgent(def)
	b.respond(cmd, view.Status(def, a, b.cfg.Catalog())+"\n"+view.BudgetStatus(b.turnCtx, b.cfg.Engine.Budgets(), team))
}

// reload reloads bundles for an admin.
func (b *slash) reload(cmd slack.SlashCommand, team string) {
	if b.cfg.Reload == nil {
		b.respond(cmd, "Reloading is not enabled here.")
		return
	}
	if why := b.notAdmin(cmd, team); why != "" {
		b.respond(cmd, why)
		return
	}
	if err := b.cfg.Reload(); err != nil {
		b.respond(cmd, "⚠️ Reload failed: "+err.Error())
		return
	}
	b.respond(cmd, view.Reloaded(b.cfg.Catalog()))
}

// notAdmin says why the person of an admin command may not run it in
// its team's channel (access.Administer), or "" when they may.
func (b *slash) notAdmin(cmd slack.SlashCommand, team string) string {
	return b.may(b.turnCtx, cmd.UserID, access.Administer, in(team, cmd.ChannelID)).Why
}

// respond answers a slash command ephemerally: chat.postEphemeral, or the
// command's response_url where the bot is not in the channel.
func (b *slash) respond(cmd slack.SlashCommand, text string) {
	text = slackmd.EscapeText(text) // only mentions are markup
	ctx := b.inChannel(b.turnCtx, cmd.ChannelID)
	err := b.call(ctx, func() error {
		_, err := b.api(ctx).PostEphemeralContext(ctx, cmd.ChannelID, cmd.UserID, slack.MsgOptionText(text, false))
		return err
	})
	if err == nil || cmd.ResponseURL == "" {
		if err != nil {
			b.log.Warn("slash reply", "err", err)
		}
		return
	}
	if err := webapi.RespondURL(b.turnCtx, cmd.ResponseURL, text); err != nil {
		b.log.Warn("slash reply via response_url", "err", err)
	}
}
