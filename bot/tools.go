package bot

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/keys"
	"agentbot/bot/view"
	"agentbot/engine"
	"agentbot/storage"
)

// Channel tools: admins give a channel's agents MCP servers with
// /agent tools add|remove <server>; the engine asks ChannelServers for the
// servers of a session's channel, and SessionPerson for who its turn acts
// as.

// slashTools lists, adds or removes the channel's MCP servers, for admins.
func (b *slash) slashTools(cmd slack.SlashCommand, team string, args []string) {
	if why := b.notAdmin(cmd, team); why != "" {
		b.respond(cmd, why)
		return
	}
	current, err := storage.ChannelTools(b.turnCtx, b.cfg.Store, team, cmd.ChannelID)
	if err != nil {
		b.log.Error("read channel tools", "err", err)
		b.respond(cmd, "⚠️ I couldn't read this channel's tools. Please try again.")
		return
	}
	op := ""
	if len(args) > 0 {
		op = strings.ToLower(args[0])
	}
	switch {
	case op == "" || op == "list":
		b.respond(cmd, b.toolsText(current))
		return
	case (op == "add" || op == "remove") && len(args) == 2:
	default:
		b.respond(cmd, "Usage: `/agent tools`, `/agent tools add <server>` or `/agent tools remove <server>`. "+b.knownServers())
		return
	}
	name := args[1]
	next, ok := b.changedTools(cmd, op, name, current)
	if !ok {
		return
	}
	if err := storage.SetChannelTools(b.turnCtx, b.cfg.Store, team, cmd.ChannelID, next); err != nil {
		b.log.Error("set channel tools", "err", err)
		b.respond(cmd, "⚠️ I couldn't save this channel's tools. Please try again.")
		return
	}
	b.log.Info("channel tools changed", "channel", cmd.ChannelID, "op", op, "server", name, "by", cmd.UserID)
	verb := "added to"
	if op == "remove" {
		verb = "removed from"
	}
	next, _ = storage.ChannelTools(b.turnCtx, b.cfg.Store, team, cmd.ChannelID)
	b.respond(cmd, fmt.Sprintf("`%s` %s this channel's tools; it applies from the next turn.\n%s", name, verb, b.toolsText(next)))
}

// changedTools returns the channel's servers with name added or removed
// (op); when that changes nothing or names no configured server, it says
// so and reports false.
func (b *slash) changedTools(cmd slack.SlashCommand, op, name string, current []string) ([]string, bool) {
	switch {
	case op == "add" && !slices.Contains(b.cfg.MCPServers, name):
		b.respond(cmd, fmt.Sprintf("There is no MCP server `%s` in the MCP configuration. %s", shorten(name, 100), b.knownServers()))
	case op == "add" && slices.Contains(current, name):
		b.respond(cmd, fmt.Sprintf("`%s` is already one of this channel's tools.\n%s", name, b.toolsText(current)))
	case op == "add":
		return append(slices.Clone(current), name), true
	case !slices.Contains(current, name):
		b.respond(cmd, fmt.Sprintf("`%s` is not one of this channel's tools.\n%s", shorten(name, 100), b.toolsText(current)))
	default:
		return slices.DeleteFunc(slices.Clone(current), func(s string) bool { return s == name }), true
	}
	return nil, false
}

// toolsText lists a channel's servers and the configured ones.
func (b *slash) toolsText(current []string) string { return view.ToolsText(current, b.cfg.MCPServers) }

// knownServers names the servers of the MCP configuration.
func (b *slash) knownServers() string { return view.KnownServers(b.cfg.MCPServers) }

// ChannelToolsReader reads a channel's MCP servers; Store and
// storage.Backend implement it.
type ChannelToolsReader = storage.ChannelReader

// ChannelServers returns the engine's hook for a session's channel tools:
// the MCP servers the channel of a session key ("team/channel/thread")
// adds to its agents' tools, read from st. It exists before the Bot does
// (the engine is built first). A key without a channel has none.
func ChannelServers(st ChannelToolsReader) func(sessionKey string) ([]string, error) {
	return func(sessionKey string) ([]string, error) {
		k, ok := keys.ParseThread(sessionKey)
		if !ok || k.Channel == "" {
			return nil, nil
		}
		// TODO stays: engine/mcp's SessionTools asks for the servers without a context.
		servers, err := storage.ChannelTools(context.TODO(), st, k.Team, k.Channel)
		if err != nil {
			return nil, fmt.Errorf("channel tools of %s: %w", sessionKey, err)
		}
		return servers, nil
	}
}

// SessionPerson is who a session's turn acts as at the MCP servers whose
// identity is user: the workspace of its thread (its session key,
// "team/channel/thread") and the person whose message started the turn
// (s.Person; a resumed turn's is the person its waiting calls act as).
// A key that is not a thread's has no team.
func SessionPerson(s *engine.Session) (team, user string) {
	if k, ok := keys.ParseThread(s.Key); ok {
		team = k.Team
	}
	return team, s.Person
}
