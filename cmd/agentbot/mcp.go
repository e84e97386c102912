package main

import (
	"context"
	"fmt"
	"log/slog"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/mcp"
)

// mcpTools is the MCP side of a running agentbot: the servers' config and
// the one Manager that connects to them.
type mcpTools struct {
	cfg *mcp.Config
	mgr *mcp.Manager
	// Channel returns the servers a session's channel adds, by session key
	// (/agent tools add; nil: none). serve sets it from the Slack side's
	// channel settings.
	Channel func(sessionKey string) []string
}

// loadMCP reads the MCP config the configuration names and starts its
// Manager (servers connect on first use). It returns nil without a config.
// Problems of single servers (a missing variable, a bad glob...) are
// logged as warnings and those servers left out; a file that cannot be
// read or is not valid YAML is an error.
func loadMCP(cfg *Config, getenv func(string) string, log *slog.Logger) (*mcpTools, error) {
	if cfg.MCPConfig == "" {
		return nil, nil
	}
	mc, probs, err := mcp.LoadConfig(cfg.MCPConfig, getenv)
	if err != nil {
		return nil, fmt.Errorf("MCP config (AGENTBOT_MCP_CONFIG): %w", err)
	}
	for _, p := range probs {
		log.Warn("mcp config problem; the server is left out", "server", p.Server, "reason", p.Reason)
	}
	return &mcpTools{cfg: mc, mgr: mcp.NewManager(mc, mcp.Options{Logger: log})}, nil
}

// warnAgents logs each agent's MCP servers that the config does not offer.
func (t *mcpTools) warnAgents(cat *catalog.Catalog, log *slog.Logger) {
	if cat == nil {
		return
	}
	for _, a := range cat.Agents {
		_, probs := t.config().Resolve(a.MCP)
		for _, p := range probs {
			log.Warn("agent names an unusable MCP server", "agent", a.ID, "server", p.Server, "reason", p.Reason)
		}
	}
}

// config returns the MCP config (an empty one without a file).
func (t *mcpTools) config() *mcp.Config {
	if t == nil || t.cfg == nil {
		return &mcp.Config{}
	}
	return t.cfg
}

// servers are the MCP servers of a session: its agent's, then its
// channel's.
func (t *mcpTools) servers(s *engine.Session) []string {
	var out []string
	if s.Agent != nil {
		out = append(out, s.Agent.MCP...)
	}
	if t.Channel != nil {
		out = append(out, t.Channel(s.Key)...)
	}
	return out
}

// external is the engine's ExternalTools hook (nil without MCP).
func (t *mcpTools) external() func(context.Context, *engine.Session) []engine.ExternalTool {
	if t == nil {
		return nil
	}
	return t.mgr.SessionTools(t.servers)
}

// Close stops the servers (stdio processes included).
func (t *mcpTools) Close() {
	if t != nil {
		_ = t.mgr.Close()
	}
}

// secrets are the config's secret values, for redacting output.
func (t *mcpTools) secrets() []string {
	var out []string
	for _, s := range t.config().Servers {
		for _, v := range s.Env {
			out = append(out, v.Reveal())
		}
		for _, v := range s.Headers {
			out = append(out, v.Reveal())
		}
	}
	return out
}
