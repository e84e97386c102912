// Package mcptools wires the MCP servers agentbot's configuration names
// (AGENTBOT_MCP_CONFIG) into the engine: one Manager connects to them, and
// a session gets its agent's servers and its Slack channel's.
package mcptools

import (
	"context"
	"fmt"
	"log/slog"

	"agentbot/bot"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/mcp"
)

// Tools is the MCP side of a running agentbot: the servers' config and
// the one Manager that connects to them.
type Tools struct {
	cfg *mcp.Config
	mgr *mcp.Manager
	// Channel returns the servers a session's channel adds, by session key
	// (/agent tools add; nil: none). serve sets it from the Slack side's
	// channel settings.
	Channel func(sessionKey string) []string
	// Ask asks a turn's person what a server asks in the middle of a call
	// (elicitation): the Slack thread's form, or the terminal. Set it
	// before the engine is made.
	Ask func(ctx context.Context, s *engine.Session, q engine.Question) (engine.Answer, error)
	// Person is who a session's turn acts as at the identity user servers
	// (team and user); nil: the terminal's user (team TerminalTeam, the
	// session's person). serve sets it to the Slack workspace and person.
	Person func(s *engine.Session) (team, user string)
}

// TerminalTeam is the team of the person at the terminal (agentbot chat),
// whose identity at an identity user server is (TerminalTeam, $USER).
const TerminalTeam = "terminal"

// Load reads the MCP config file path (AGENTBOT_MCP_CONFIG) and starts its
// Manager (servers connect on first use). It returns nil without a config.
// Problems of single servers (a missing variable, a bad glob...) are
// logged as warnings and those servers left out; a file that cannot be
// read or is not valid YAML is an error.
func Load(path string, getenv func(string) string, log *slog.Logger) (*Tools, error) {
	mc, err := Read(path, getenv, log)
	if err != nil {
		return nil, err
	}
	return New(mc, mcp.Options{Logger: log}), nil
}

// Read reads the MCP config file path as Load does, without starting a
// Manager: nil without a config.
func Read(path string, getenv func(string) string, log *slog.Logger) (*mcp.Config, error) {
	if path == "" {
		return nil, nil
	}
	mc, probs, err := mcp.LoadConfig(path, getenv)
	if err != nil {
		return nil, fmt.Errorf("MCP config (AGENTBOT_MCP_CONFIG): %w", err)
	}
	for _, p := range probs {
		log.Warn("mcp config problem; the server is left out", "server", p.Server, "reason", p.Reason)
	}
	return mc, nil
}

// New starts the Manager of mc with o (nil mc: nil Tools). A server's
// questions during a call go to the call's person (Options.AskPeople;
// Tools.Ask says how they are asked).
func New(mc *mcp.Config, o mcp.Options) *Tools {
	if mc == nil {
		return nil
	}
	o.AskPeople = true
	return &Tools{cfg: mc, mgr: mcp.NewManager(mc, o)}
}

// WarnAgents logs each agent's MCP servers that the config does not offer.
func (t *Tools) WarnAgents(cat *catalog.Catalog, log *slog.Logger) {
	for _, p := range AgentServerProblems(cat, t.Config()) {
		log.Warn("agent names an unusable MCP server", "agent", p.Agent, "server", p.Server, "reason", p.Reason)
	}
}

// AgentServerProblem is an MCP server an agent names that the config does
// not offer.
type AgentServerProblem struct {
	// Agent is the agent's id.
	Agent string
	mcp.Problem
}

// AgentServerProblems lists, agent by agent, the MCP servers of the
// catalog's agents that mc does not offer (none for a nil catalog).
func AgentServerProblems(cat *catalog.Catalog, mc *mcp.Config) []AgentServerProblem {
	if cat == nil {
		return nil
	}
	var out []AgentServerProblem
	for _, a := range cat.Agents {
		_, probs := mc.Resolve(a.MCP)
		for _, p := range probs {
			out = append(out, AgentServerProblem{Agent: a.ID, Problem: p})
		}
	}
	return out
}

// UseChannels adds a session's channel servers (/agent tools add, kept in
// the store) to its agent's, and makes a turn act as its Slack person
// (bot.SessionPerson) at the identity user servers; a store error is
// logged and adds none.
func (t *Tools) UseChannels(st bot.ChannelToolsReader, log *slog.Logger) {
	if t == nil {
		return
	}
	t.Person = bot.SessionPerson
	channelServers := bot.ChannelServers(st)
	t.Channel = func(key string) []string {
		servers, err := channelServers(key)
		if err != nil {
			log.Warn("channel MCP servers", "err", err)
		}
		return servers
	}
}

// Names are the names of the config's usable servers (nil without MCP).
func (t *Tools) Names() []string {
	var out []string
	for _, s := range t.Config().Servers {
		out = append(out, s.Name)
	}
	return out
}

// Config returns the MCP config (an empty one without a file).
func (t *Tools) Config() *mcp.Config {
	if t == nil || t.cfg == nil {
		return &mcp.Config{}
	}
	return t.cfg
}

// servers are the MCP servers of a session: its agent's, then its
// channel's.
func (t *Tools) servers(s *engine.Session) []string {
	var out []string
	if s.AgentDef != nil {
		out = append(out, s.AgentDef.MCP...)
	}
	if t.Channel != nil {
		out = append(out, t.Channel(s.Key)...)
	}
	return out
}

// identity is who a session's turn acts as at the identity user servers
// (see Person).
func (t *Tools) identity(s *engine.Session) mcp.Identity {
	if t.Person == nil {
		return mcp.Identity{Kind: mcp.IdentityUser, Team: TerminalTeam, User: s.Person}
	}
	team, user := t.Person(s)
	return mcp.Identity{Kind: mcp.IdentityUser, Team: team, User: user}
}

// External is the engine's ExternalTools hook (nil without MCP).
// The servers connect and list their tools in the background from now on,
// so the first turn finds them ready (a person's session at an identity
// user server opens on their first use).
func (t *Tools) External() func(context.Context, *engine.Session, func(string)) []engine.ExternalTool {
	if t == nil {
		return nil
	}
	t.mgr.Warm(t.Names())
	return t.mgr.SessionTools(t.servers, t.identity)
}

// AskHook is the engine's Ask hook (nil without MCP).
func (t *Tools) AskHook() func(context.Context, *engine.Session, engine.Question) (engine.Answer, error) {
	if t == nil {
		return nil
	}
	return t.Ask
}

// Manager is the Manager that connects to the servers.
func (t *Tools) Manager() *mcp.Manager { return t.mgr }

// Close stops the servers (stdio processes included).
func (t *Tools) Close() {
	if t != nil {
		_ = t.mgr.Close()
	}
}

// Secrets are the secret values of an MCP config, for redacting output
// (none for a nil config).
func Secrets(mc *mcp.Config) []string {
	if mc == nil {
		return nil
	}
	var out []string
	for _, s := range mc.Servers {
		for _, v := range s.Env {
			out = append(out, v.Reveal())
		}
		for _, v := range s.Headers {
			out = append(out, v.Reveal())
		}
	}
	return out
}
