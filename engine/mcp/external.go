package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"sync"

	"agentbot/engine"
)

// External returns the tool as the engine offers it to a session: its
// name, schema and policy, and a call that gives the engine the result's
// text, error flag and files, and the call's progress.
func (t Tool) External() engine.ExternalTool {
	return engine.ExternalTool{
		Name: t.Name, Server: t.Server, Description: t.Description, Schema: t.Schema, Policy: t.Policy,
		Call: func(ctx context.Context, args json.RawMessage, call engine.ExternalCall) (engine.ExternalReply, error) {
			r, err := t.CallProgress(ctx, args, call.Progress)
			return engine.ExternalReply{Text: r.Text, IsError: r.IsError, Files: r.Files}, err
		},
	}
}

// digits are the numbers of a problem text.
var digits = regexp.MustCompile(`[0-9][0-9.]*`)

// SessionTools returns an engine.Config.ExternalTools for m: a session is
// offered the tools of the servers servers names for it (its agent's and
// its channel's), as far as they answer within the listing budget.
// Servers whose tools are unavailable (unknown, disabled, unreachable,
// still connecting) are left out: the user is told once per session until
// the server's tools are back, and the problem is logged at warn level
// once, then at debug level per turn.
func (m *Manager) SessionTools(servers func(s *engine.Session) []string) func(context.Context, *engine.Session, func(string)) []engine.ExternalTool {
	var seen sync.Map // problems already logged at warn level
	var told sync.Map // session and server → the user was told
	return func(ctx context.Context, s *engine.Session, notify func(string)) []engine.ExternalTool {
		names := servers(s)
		if len(names) == 0 {
			return nil
		}
		tools, probs := m.Tools(ctx, names)
		down := map[string]bool{}
		for _, p := range probs {
			// Each problem is a warning once, then a debug line per turn.
			lvl := slog.LevelDebug
			// Numbers (failure counts, retry delays) do not make a new problem.
			if _, dup := seen.LoadOrStore(p.Server+"\x00"+digits.ReplaceAllString(p.Reason, "#"), true); !dup {
				lvl = slog.LevelWarn
			}
			m.log.Log(ctx, lvl, "mcp tools unavailable", "session", s.ID, "server", p.Server, "problem", p.Reason)
			if !p.Unavailable || down[p.Server] {
				continue
			}
			down[p.Server] = true
			if _, dup := told.LoadOrStore(s.ID+"\x00"+p.Server, true); !dup && notify != nil {
				notify(fmt.Sprintf("The tools of MCP server %s are unavailable for now (%s); I'm going on without them.", p.Server, engine.CutUTF8(p.Reason, 300)))
			}
		}
		for _, n := range names {
			if !down[n] {
				told.Delete(s.ID + "\x00" + n)
			}
		}
		out := make([]engine.ExternalTool, len(tools))
		for i, t := range tools {
			out[i] = t.External()
		}
		return out
	}
}
