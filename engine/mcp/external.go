package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"sync"

	"agentbot/engine"
)

// External returns the tool as the engine offers it to a session: its
// name, schema and policy, and a call that gives the engine the result's
// text and error flag.
func (t Tool) External() engine.ExternalTool {
	return engine.ExternalTool{
		Name: t.Name, Server: t.Server, Description: t.Description, Schema: t.Schema, Policy: t.Policy,
		Call: func(ctx context.Context, args json.RawMessage) (string, bool, error) {
			r, err := t.Call(ctx, args)
			return r.Text, r.IsError, err
		},
	}
}

// digits are the numbers of a problem text.
var digits = regexp.MustCompile(`[0-9][0-9.]*`)

// SessionTools returns an engine.Config.ExternalTools for m: a session is
// offered the tools of the servers servers names for it (its agent's and
// its channel's). Servers that are unknown or unreachable are logged at
// warn level and left out; the others are offered all the same.
func (m *Manager) SessionTools(servers func(s *engine.Session) []string) func(context.Context, *engine.Session) []engine.ExternalTool {
	var seen sync.Map // problems already logged at warn level
	return func(ctx context.Context, s *engine.Session) []engine.ExternalTool {
		names := servers(s)
		if len(names) == 0 {
			return nil
		}
		tools, probs := m.Tools(ctx, names)
		for _, p := range probs {
			// Each problem is a warning once, then a debug line per turn.
			lvl := slog.LevelDebug
			// Numbers (failure counts, retry delays) do not make a new problem.
			if _, dup := seen.LoadOrStore(p.Server+"\x00"+digits.ReplaceAllString(p.Reason, "#"), true); !dup {
				lvl = slog.LevelWarn
			}
			m.log.Log(ctx, lvl, "mcp tools unavailable", "session", s.ID, "server", p.Server, "problem", p.Reason)
		}
		out := make([]engine.ExternalTool, len(tools))
		for i, t := range tools {
			out[i] = t.External()
		}
		return out
	}
}
