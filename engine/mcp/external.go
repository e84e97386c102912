package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"

	"agentbot/engine"
	"agentbot/engine/transcript"
)

// External returns the tool as the engine offers it to a session: its
// name, schema and policy, and a call that gives the engine the result's
// text, error flag and files, and the call's progress. A tool of an
// identity user server, with an Authorizer, reports NeedsConnection when
// the server wants authorization and the person the tool acts as is not
// connected: the Authorizer has no token for them (a zero one, or an
// error wrapping ErrAuthorizationNeeded), or only one the server refused.
// The engine's call then waits for them to connect.
func (t Tool) External() engine.ExternalTool {
	x := engine.ExternalTool{
		Name: t.Name, Server: t.Server, Description: t.Description, Schema: t.Schema, Policy: t.Policy,
		Call: func(ctx context.Context, args json.RawMessage, call engine.ExternalCall) (engine.ExternalReply, error) {
			r, err := t.CallProgress(withSample(withAsk(ctx, call.Ask), call.Sample), args, call.Progress)
			return engine.ExternalReply{Text: r.Text, IsError: r.IsError, Files: r.Files}, err
		},
	}
	if t.c != nil && t.c.user && t.c.m.opts.Authorizer != nil {
		x.NeedsConnection = t.needsConnection
	}
	return x
}

// needsConnection reports whether the person the tool acts as must
// connect their account first: the server wants authorization (the
// connect tool stands for one that does) and they are not connected.
func (t Tool) needsConnection(ctx context.Context) bool {
	if !t.connect && !t.c.asksAuth.Load() {
		return false
	}
	return !t.c.connected(ctx, t.who)
}

// digits are the numbers of a problem text.
var digits = regexp.MustCompile(`[0-9][0-9.]*`)

// SessionTools returns an engine.Config.ExternalTools for m: a session is
// offered the tools of the servers servers names for it (its agent's and
// its channel's), as far as they answer within the listing budget. The
// tools of an identity user server act as who(s), the person whose
// message started the turn (nil who: nobody in particular); one whose
// person must connect first waits for that (Tool.External), and a server
// nobody has listed yet offers its connect tool to a person who is not
// connected. A resumed turn whose waiting call is a connect tool's gets
// that tool again, to run it.
// Servers whose tools are unavailable (unknown, disabled, unreachable,
// still connecting) are left out: the user is told once per session until
// the server's tools are back, and the problem is logged at warn level
// once, then at debug level per turn.
func (m *Manager) SessionTools(servers func(s *engine.Session) []string, who func(s *engine.Session) Identity) func(context.Context, *engine.Session, func(string)) []engine.ExternalTool {
	var seen sync.Map // problems already logged at warn level
	var told sync.Map // session and server → the user was told
	return func(ctx context.Context, s *engine.Session, notify func(string)) []engine.ExternalTool {
		names := servers(s)
		if len(names) == 0 {
			return nil
		}
		var id Identity
		if who != nil {
			id = who(s)
		}
		tools, probs := m.tools(ctx, names, m.opts.ListBudget, id)
		tools = m.pendingConnects(s, names, id, tools)
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

// pendingConnects adds to tools the connect tool of each identity user
// server that a call of s waits on (a connect gate, from before the
// person connected), when the listing no longer offers it: the resumed
// turn runs the call.
func (m *Manager) pendingConnects(s *engine.Session, servers []string, who Identity, tools []Tool) []Tool {
	if len(s.Pending) == 0 {
		return tools
	}
	names, _ := m.cfg.Resolve(servers)
	for _, n := range names {
		c := m.conns[n]
		name := toolName(n, connectAccount)
		if !c.user || !slices.ContainsFunc(s.Pending, func(p transcript.Approval) bool { return p.Tool == name }) ||
			slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == name }) {
			continue
		}
		tools = append(tools, c.connectTool(who))
	}
	return tools
}
