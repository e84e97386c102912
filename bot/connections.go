package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/view"
	"agentbot/storage"
)

// Connections are the MCP connections stored for people and service
// identities (storage/credentials' Vault, through a thin adapter that
// cmd/agentbot wires): /agent connections lists them, /agent disconnect
// ends one. Nothing of it carries a secret.
type Connections interface {
	// List lists the connections f selects, without secrets.
	List(ctx context.Context, f storage.CredentialFilter) ([]storage.CredentialInfo, error)
	// Revoke revokes the connection of (team, user, server) at its
	// authorization server where it offers revocation; it does not
	// forget it (Delete does). Its error holds no secret.
	Revoke(ctx context.Context, team, user, server string) error
	// Delete forgets the connection of (team, user, server); none is not
	// an error.
	Delete(ctx context.Context, team, user, server string) error
}

// revokeTimeout bounds /agent disconnect's revocation at the server.
const revokeTimeout = 15 * time.Second

// connectionsOff is the answer to /agent connections and disconnect
// without Config.Connections.
const connectionsOff = "Connections to MCP servers are not enabled here."

// slashConnections lists the person's own connections and, for an admin,
// the service identities of their team (/agent connections).
func (b *slash) slashConnections(cmd slack.SlashCommand, team string) {
	conns := b.cfg.Connections
	if conns == nil {
		b.respond(cmd, connectionsOff)
		return
	}
	mine, err := conns.List(b.turnCtx, storage.CredentialFilter{Team: team, User: cmd.UserID})
	if err != nil {
		b.log.Error("list connections", "err", err)
		b.respond(cmd, "⚠️ I couldn't read your connections. Please try again.")
		return
	}
	// The team's service identities (and those for every team), shown
	// to admins only; whether the person is one is asked only when there
	// are some.
	all, err := conns.List(b.turnCtx, storage.CredentialFilter{User: storage.ServiceUser})
	if err != nil {
		b.log.Error("list service identities", "err", err)
	}
	var service []storage.CredentialInfo
	for _, c := range all {
		if c.Team == team || c.Team == "" { // never another team's
			service = append(service, c)
		}
	}
	if len(service) > 0 && b.notAdmin(cmd, team) != "" {
		service = nil
	}
	b.respond(cmd, view.Connections(mine, service, time.Now()))
}

// slashDisconnect revokes and forgets the person's own connection to a
// server (/agent disconnect SERVER): only ever the caller's, whatever
// they type. With --service an admin ends the server's service identity
// instead (their team's, else the one for every team).
func (b *slash) slashDisconnect(cmd slack.SlashCommand, team string, args []string) {
	conns := b.cfg.Connections
	if conns == nil {
		b.respond(cmd, connectionsOff)
		return
	}
	if len(args) == 0 {
		b.respond(cmd, "Which server? `/agent disconnect <server>` — `/agent connections` lists yours.")
		return
	}
	server, user := args[0], cmd.UserID
	service := slices.Contains(args[1:], "--service")
	if service {
		if why := b.notAdmin(cmd, team); why != "" {
			b.respond(cmd, why)
			return
		}
		user = storage.ServiceUser
	}
	b.respond(cmd, b.disconnect(b.turnCtx, team, user, server, service))
}

// disconnect revokes and forgets the connection of (team, user) to
// server: the person's own in this team; with service (user is the
// service user), the team's service identity, else the one for every
// team. It says what happened.
func (b *core) disconnect(ctx context.Context, team, user, server string, service bool) string {
	conns := b.cfg.Connections
	have, err := conns.List(ctx, storage.CredentialFilter{User: user, Server: server})
	if err != nil {
		b.log.Error("list connections", "err", err)
		return "⚠️ I couldn't read your connections. Please try again."
	}
	// The person's own in this team; a service identity of this team,
	// else one for every team ("").
	i := slices.IndexFunc(have, func(c storage.CredentialInfo) bool { return c.Team == team })
	if i < 0 && service {
		i = slices.IndexFunc(have, func(c storage.CredentialInfo) bool { return c.Team == "" })
	}
	switch {
	case i < 0 && service:
		return fmt.Sprintf("No service identity is stored for `%s`.", server)
	case i < 0:
		return fmt.Sprintf("You have no connection to `%s`. `/agent connections` lists yours.", server)
	}
	team = have[i].Team
	rctx, cancel := context.WithTimeout(ctx, revokeTimeout)
	rerr := conns.Revoke(rctx, team, user, server)
	cancel()
	if rerr != nil {
		b.log.Warn("revoke connection", "team", team, "user", user, "server", server, "err", rerr)
	}
	if err := conns.Delete(ctx, team, user, server); err != nil {
		b.log.Error("delete connection", "team", team, "user", user, "server", server, "err", err)
		return fmt.Sprintf("⚠️ I couldn't forget your connection to `%s`. Please try again.", server)
	}
	return view.Disconnected(server, service, rerr == nil, errors.Is(rerr, context.DeadlineExceeded))
}
