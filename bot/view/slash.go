package view

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"agentbot/engine"
	"agentbot/engine/catalog"
)

// SlashHelp is what /agent help answers.
const SlashHelp = "*/agent* — pick who helps in this channel\n" +
	"• `/agent list` — the agents you can talk to\n" +
	"• `/agent use <agent>` — make an agent this channel's default (new threads start with it)\n" +
	"• `/agent status` — this channel's default and what is loaded\n" +
	"• `/agent reset` — clear this channel's default (threads start with a picker)\n" +
	"• `/agent reload` — reload bundles without a restart (admins)\n" +
	"• `/agent tools` · `/agent tools add <server>` · `/agent tools remove <server>` — the MCP servers this channel's agents may use (admins)\n" +
	"• `/agent project` — this channel's project: the documents all its threads share · `/agent project use <name>` · `/agent project new <name>` — share a project between channels (admins)\n" +
	"• `/agent connections` — your connections to MCP servers (and, for admins, the service identities) · `/agent disconnect <server>` — end yours (`--service`: the service identity, admins)\n" +
	"• `/agent connect <server>` — connect your account at an MCP server ahead of time, so agents act as you there (`--service`: its service identity, admins)\n" +
	"• `/agent party` — the saved party rooms of this channel's agent; `@agentbot party with Winston and Mary about X` starts one\n" +
	"In a thread, `@agentbot use <agent>` switches that thread's agent."

// Status reports, for /agent status, the channel's default agent (def,
// and a when it is loaded) and what the catalog holds.
func Status(def string, a *catalog.Agent, cat *catalog.Catalog) string {
	msg := "This channel has no default agent: a mention gets a picker."
	if a != nil {
		msg = fmt.Sprintf("This channel's default agent is %s *%s* (`%s`).", a.Icon, a.Name, a.ID)
	} else if def != "" {
		msg = fmt.Sprintf("This channel's default agent `%s` is not loaded any more; `/agent use` another.", def)
	}
	msg += fmt.Sprintf("\n%d agents loaded (%d to pick from)", len(cat.Agents), len(cat.EntryPoints()))
	if n := len(cat.Problems); n > 0 {
		msg += fmt.Sprintf(", %d bundle problem(s) — `agentbot agents` shows them", n)
	}
	return msg + "."
}

// BudgetStatus reports the caps for /agent status: the workspace's use
// today and the session cap.
func BudgetStatus(ctx context.Context, b *engine.Budgets, team string) string {
	if b == nil || (b.SessionTokens == 0 && b.DailyTokens == 0) {
		return "No token budgets are set."
	}
	var parts []string
	if b.DailyTokens > 0 {
		used, _ := b.Daily(ctx, team)
		parts = append(parts, fmt.Sprintf("this workspace used %s of its %s tokens today (UTC)", engine.Thousands(used), engine.Thousands(b.DailyTokens)))
	}
	if b.SessionTokens > 0 {
		parts = append(parts, fmt.Sprintf("each thread may use %s tokens; `@agentbot status` in a thread shows its use", engine.Thousands(b.SessionTokens)))
	}
	return "Token budgets: " + strings.Join(parts, "; ") + "."
}

// Reloaded reports a reload: the agents loaded and the first problems.
func Reloaded(cat *catalog.Catalog) string {
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
	return msg + "\nRunning threads keep the agent they started with."
}

// ToolsText lists a channel's MCP servers and the configured ones.
func ToolsText(current, configured []string) string {
	msg := "This channel adds no MCP servers to its agents' tools."
	if len(current) > 0 {
		msg = "This channel's agents may also use the MCP servers: `" + strings.Join(current, "`, `") + "`."
	}
	return msg + " " + KnownServers(configured)
}

// KnownServers names the servers of the MCP configuration.
func KnownServers(configured []string) string {
	if len(configured) == 0 {
		return "No MCP servers are configured (AGENTBOT_MCP_CONFIG)."
	}
	known := slices.Sorted(slices.Values(configured))
	return "Configured servers: `" + strings.Join(known, "`, `") + "`."
}
