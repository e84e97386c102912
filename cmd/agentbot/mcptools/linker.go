package mcptools

import (
	"context"
	"fmt"
	"time"

	"agentbot/bot"
	"agentbot/engine"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/connect"
	"agentbot/engine/mcp/oauth"
)

// Linker makes the connect links of the bot (bot.Linker) with the
// connector of the servers of Config: a person's own account for an
// identity user server, the service identity (one for every team) for
// an identity service server.
type Linker struct {
	Connector *connect.Connector
	Config    *mcp.Config
}

// ConnectLink begins a flow for (team, user), or the service identity
// with service, at server, asked from thread, and returns its
// authorization URL.
func (l Linker) ConnectLink(ctx context.Context, team, user, server, thread string, service bool) (string, error) {
	s := l.server(server)
	if s == nil {
		return "", fmt.Errorf("no MCP server %q in the MCP configuration", server)
	}
	who := mcp.Identity{Kind: mcp.IdentityUser, Team: team, User: user}
	switch id := mcp.IdentityOf(s); {
	case service && id == mcp.IdentityService:
		who = mcp.Identity{Kind: mcp.IdentityService}
	case service:
		return "", fmt.Errorf("%s has identity %s: each person connects their own account there, not a service identity", server, id)
	case id != mcp.IdentityUser:
		return "", fmt.Errorf("%s has identity %s: people do not connect their own accounts there", server, id)
	}
	return l.Connector.ConnectURLFrom(ctx, s, who, thread)
}

// LinkTTL is how long a link may be finished.
func (l Linker) LinkTTL() time.Duration {
	if l.Connector.FlowTTL > 0 {
		return l.Connector.FlowTTL
	}
	return oauth.DefaultFlowTTL
}

// server is the configured server named name; nil when none.
func (l Linker) server(name string) *mcp.Server {
	if l.Config == nil {
		return nil
	}
	for i := range l.Config.Servers {
		if l.Config.Servers[i].Name == name {
			return &l.Config.Servers[i]
		}
	}
	return nil
}

// Linker is the bot's connect links for mc's servers, or none without
// OAuth servers.
func (a Auth) Linker(mc *mcp.Config) bot.Linker {
	if a.Connector == nil {
		return nil
	}
	return Linker{Connector: a.Connector, Config: mc}
}

// Resume makes a finished connection, on whichever replica serves the
// redirect, resume in b the turns waiting on it.
func (a Auth) Resume(b *bot.Bot) {
	if a.Connector != nil {
		a.Connector.OnConnected = func(c connect.Connected) { b.AccountConnected(c.Team, c.User, c.Server, c.From) }
	}
}

// AskIn sends the servers' questions (elicitations) to the turn's person
// in the thread, through the bot b returns (which exists by the time a
// turn runs).
func (t *Tools) AskIn(b func() *bot.Bot) {
	if t != nil {
		t.Ask = func(ctx context.Context, s *engine.Session, q engine.Question) (engine.Answer, error) {
			return b().Ask(ctx, s, q)
		}
	}
}
