package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine"
)

const slashHelp = "*/agent* — pick who helps in this channel\n" +
	"• `/agent list` — the agents you can talk to\n" +
	"• `/agent use <agent>` — make an agent this channel's default (new threads start with it)\n" +
	"• `/agent status` — this channel's default and what is loaded\n" +
	"• `/agent reset` — clear this channel's default (threads start with a picker)\n" +
	"• `/agent reload` — reload bundles without a restart (admins)\n" +
	"• `/agent tools` · `/agent tools add <server>` · `/agent tools remove <server>` — the MCP servers this channel's agents may use (admins)\n" +
	"In a thread, `@agentbot use <agent>` switches that thread's agent."

// onSlash answers /agent ephemerally. Slash commands never run in threads,
// so `use` sets the channel default.
func (b *Bot) onSlash(cmd slack.SlashCommand) {
	if why := b.denied(cmd.UserID, cmd.ChannelID, strings.HasPrefix(cmd.ChannelID, "D")); why != "" {
		b.respond(cmd, why)
		return
	}
	f := strings.Fields(cmd.Text)
	sub := ""
	if len(f) > 0 {
		sub = strings.ToLower(f[0])
	}
	team := cmd.TeamID
	if team == "" {
		team = b.teamID
	}
	switch sub {
	case "", "help":
		b.respond(cmd, slashHelp)
	case "list":
		b.respond(cmd, b.agentList())
	case "use":
		b.slashUse(cmd, team, f[1:])
	case "status":
		b.slashStatus(cmd, team)
	case "reset":
		if err := b.cfg.Store.SetChannelDefault(team, cmd.ChannelID, ""); err != nil {
			b.respond(cmd, "⚠️ I couldn't clear the channel default. Please try again.")
			return
		}
		b.respond(cmd, "This channel has no default agent now; a mention gets a picker.")
	case "reload":
		b.reload(cmd)
	case "tools":
		b.slashTools(cmd, team, f[1:]) // tools.go
	default:
		b.respond(cmd, fmt.Sprintf("I don't know `/agent %s`.\n%s", sub, slashHelp))
	}
}

// slashUse makes an agent the channel's default (/agent use <agent>).
func (b *Bot) slashUse(cmd slack.SlashCommand, team string, args []string) {
	if len(args) == 0 {
		b.respond(cmd, "Which agent? `/agent use <agent>` — "+b.agentList())
		return
	}
	a, ok := b.findAgent(args[0])
	if !ok {
		b.respond(cmd, fmt.Sprintf("I don't know the agent `%s`. %s", args[0], b.agentList()))
		return
	}
	if err := b.cfg.Store.SetChannelDefault(team, cmd.ChannelID, a.ID); err != nil {
		b.log.Error("set channel default", "err", err)
		b.respond(cmd, "⚠️ I couldn't save the channel default. Please try again.")
		return
	}
	b.respond(cmd, fmt.Sprintf("%s *%s* (%s) is now this channel's default. Mention me in a message to start a thread with %s.", a.Icon, a.Name, a.ID, a.Name))
}

// slashStatus reports the channel's default agent, what is loaded, and the
// token budgets (/agent status).
func (b *Bot) slashStatus(cmd slack.SlashCommand, team string) {
	def, _ := b.cfg.Store.ChannelDefault(team, cmd.ChannelID)
	cat := b.cfg.Catalog()
	msg := "This channel has no default agent: a mention gets a picker."
	if a, ok := b.findAgent(def); ok {
		msg = fmt.Sprintf("This channel's default agent is %s *%s* (`%s`).", a.Icon, a.Name, a.ID)
	} else if def != "" {
		msg = fmt.Sprintf("This channel's default agent `%s` is not loaded any more; `/agent use` another.", def)
	}
	msg += fmt.Sprintf("\n%d agents loaded (%d to pick from)", len(cat.Agents), len(cat.EntryPoints()))
	if n := len(cat.Problems); n > 0 {
		msg += fmt.Sprintf(", %d bundle problem(s) — `agentbot agents` shows them", n)
	}
	b.respond(cmd, msg+".\n"+budgetStatus(b.cfg.Engine.Budgets(), team))
}

// budgetStatus reports the caps for /agent status: the workspace's use
// today and the session cap.
func budgetStatus(b *engine.Budgets, team string) string {
	if b == nil || (b.SessionTokens == 0 && b.DailyTokens == 0) {
		return "No token budgets are set."
	}
	var parts []string
	if b.DailyTokens > 0 {
		used, _ := b.Daily(team)
		parts = append(parts, fmt.Sprintf("this workspace used %s of its %s tokens today (UTC)", engine.Thousands(used), engine.Thousands(b.DailyTokens)))
	}
	if b.SessionTokens > 0 {
		parts = append(parts, fmt.Sprintf("each thread may use %s tokens; `@agentbot status` in a thread shows its use", engine.Thousands(b.SessionTokens)))
	}
	return "Token budgets: " + strings.Join(parts, "; ") + "."
}

// reload reloads bundles for an admin.
func (b *Bot) reload(cmd slack.SlashCommand) {
	if b.cfg.Reload == nil {
		b.respond(cmd, "Reloading is not enabled here.")
		return
	}
	if !b.isAdmin(cmd.UserID) {
		b.respond(cmd, "Only workspace admins or the people in AGENTBOT_ADMINS can reload agents.")
		return
	}
	if err := b.cfg.Reload(); err != nil {
		b.respond(cmd, "⚠️ Reload failed: "+err.Error())
		return
	}
	cat := b.cfg.Catalog()
	msg := fmt.Sprintf("Reloaded: %d agents", len(cat.Agents))
	if n := len(cat.Problems); n > 0 {
		msg += fmt.Sprintf(", %d problem(s): ", n)
		for i, p := range cat.Problems {
			if i == 5 {
				msg += "…"
				break
			}
			msg += fmt.Sprintf("\n• %s: %s", p.Path, p.Reason)
		}
	}
	b.respond(cmd, msg+"\nRunning threads keep the agent they started with.")
}

// isAdmin reports whether a user may reload: listed in Admins, or a
// workspace admin or owner.
func (b *Bot) isAdmin(user string) bool {
	if slices.Contains(b.cfg.Admins, user) {
		return true
	}
	u, err := b.cfg.API.GetUserInfoContext(b.turnCtx, user)
	if err != nil {
		b.log.Warn("users.info", "err", err)
		return false
	}
	return u.IsAdmin || u.IsOwner || u.IsPrimaryOwner
}

// agentList lists the agents people can pick.
func (b *Bot) agentList() string {
	agents := b.cfg.Catalog().EntryPoints()
	if len(agents) == 0 {
		return "No agents are loaded."
	}
	var s strings.Builder
	s.WriteString("Agents:")
	for _, a := range agents {
		fmt.Fprintf(&s, "\n• %s *%s* — %s (`%s`)", a.Icon, a.Name, a.Title, a.ID)
		if a.Description != "" {
			s.WriteString(": " + a.Description)
		}
	}
	return s.String()
}

// respond answers a slash command ephemerally: chat.postEphemeral, or the
// command's response_url where the bot is not in the channel.
func (b *Bot) respond(cmd slack.SlashCommand, text string) {
	text = slackmd.EscapeText(text) // only mentions are markup
	err := b.call(b.turnCtx, func() error {
		_, err := b.cfg.API.PostEphemeralContext(b.turnCtx, cmd.ChannelID, cmd.UserID, slack.MsgOptionText(text, false))
		return err
	})
	if err == nil || cmd.ResponseURL == "" {
		if err != nil {
			b.log.Warn("slash reply", "err", err)
		}
		return
	}
	body, _ := json.Marshal(map[string]string{"response_type": "ephemeral", "text": text})
	ctx, cancel := context.WithTimeout(b.turnCtx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cmd.ResponseURL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, rerr := http.DefaultClient.Do(req)
	if rerr != nil {
		b.log.Warn("slash reply via response_url", "err", rerr)
		return
	}
	resp.Body.Close()
}
