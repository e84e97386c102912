package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"agentbot/bot"
	"agentbot/cmd/agentbot/stores"
	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// ConnectionsSynopsis is the synopsis of agentbot connections. TEAM "-"
// is no team (the terminal's connections).
const ConnectionsSynopsis = "list [--team T] [--user U] [--server S] | revoke TEAM USER SERVER"

// Connections is agentbot connections: the MCP connections stored for
// people and service identities, listed without their secrets, and
// revoked one by one.
type Connections struct {
	Stdout, Stderr io.Writer
	Store          stores.Store
	// Getenv reads the key settings (secretbox.Load); revoke needs them.
	Getenv func(string) string
	// Team, User and Server are list's --team, --user and --server.
	Team, User, Server string
	// HTTP makes revoke's revocation requests (nil: a client with
	// RevokeTimeout).
	HTTP *http.Client
}

// RevokeTimeout bounds a revocation request at an authorization server.
const RevokeTimeout = 15 * time.Second

// Run lists or revokes connections, as args (the subcommand and its
// arguments) say, and returns the exit code. list reads a running
// agentbot's bbolt store through its control socket; revoke opens the
// store itself, so a running agentbot's bbolt store must be stopped first.
func (o *Connections) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(o.Stderr, "usage: agentbot connections "+ConnectionsSynopsis)
		return 2
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			fmt.Fprintln(o.Stderr, "usage: agentbot connections "+ConnectionsSynopsis)
			return 2
		}
		return o.list(ctx)
	case "revoke":
		if len(args) != 4 {
			fmt.Fprintln(o.Stderr, "usage: agentbot connections revoke TEAM USER SERVER   (TEAM - for none; agentbot connections list names them)")
			return 2
		}
		team := args[1]
		if team == "-" {
			team = ""
		}
		return o.revoke(ctx, team, args[2], args[3])
	}
	fmt.Fprintf(o.Stderr, "agentbot connections: unknown subcommand %q\nusage: agentbot connections %s\n", args[0], ConnectionsSynopsis)
	return 2
}

// open opens the store for revoke, or prints why not and returns the
// exit code.
func (o *Connections) open(ctx context.Context, verb string) (storage.Backend, int) {
	st, err := o.Store.Open(ctx)
	if errors.Is(err, bolt.ErrLocked) {
		fmt.Fprintf(o.Stderr, "agentbot connections %s: %v: the running agentbot holds the store; stop it to %s connections here (people see and end their own with /agent connections and /agent disconnect)\n", verb, err, verb)
		return nil, 1
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot connections %s: %v\n", verb, err)
		return nil, stores.ExitCode(err)
	}
	return st, 0
}

// list prints the connections the filters select, never a secret: a
// CredentialInfo holds none, and no key is needed. It reads the store,
// or a running agentbot's through its control socket. agentbot's registered
// clients show only when --user names storage.ClientUser.
func (o *Connections) list(ctx context.Context) int {
	list, code, ok := listCredentials(ctx, o.Store, o.Stderr, "connections list", storage.CredentialFilter{Team: o.Team, User: o.User, Server: o.Server})
	if !ok {
		return code
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEAM\tUSER\tSERVER\tACCOUNT\tSCOPES\tEXPIRES\tUPDATED")
	for _, c := range list {
		if (c.User == storage.ClientUser || c.User == credentials.InstallUser) && o.User != c.User {
			continue // clients, and Slack installations (agentbot installs list)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(c.Team), c.User, c.Server, dash(c.Account),
			dash(strings.Join(c.Scopes, " ")), when(c.Expiry), when(c.Updated))
	}
	tw.Flush()
	return 0
}

// dash is s, or "-" for "".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// when is t in UTC to the minute, or "-" for zero.
func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04Z")
}

// revoke revokes the connection of (team, user, server) at its
// authorization server where offered, then deletes it whatever the
// revocation said. It exits 1 when the revocation failed (the connection
// is deleted all the same), 0 when it succeeded or the server offers
// none.
func (o *Connections) revoke(ctx context.Context, team, user, server string) int {
	kr, err := secretbox.Load(o.Getenv)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot connections revoke: %v\n", err)
		return 2
	}
	st, code := o.open(ctx, "revoke")
	if st == nil {
		return code
	}
	defer st.Close()
	v, err := credentials.New(st, kr, nil)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot connections revoke: %v\n", err)
		return 1
	}
	key := dash(team) + " " + user + " " + server
	have, err := v.List(ctx, storage.CredentialFilter{Team: team, User: user, Server: server})
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot connections revoke: %v\n", err)
		return 1
	}
	// The filter's team "" selects every team: find this one exactly.
	if !slices.ContainsFunc(have, func(c storage.CredentialInfo) bool { return c.Team == team }) {
		fmt.Fprintf(o.Stderr, "agentbot connections revoke: no connection %s (agentbot connections list names them)\n", key)
		return 1
	}
	conns := VaultConnections{Vault: v, HTTP: o.HTTP}
	rerr := conns.Revoke(ctx, team, user, server)
	switch {
	case rerr == nil:
		fmt.Fprintf(o.Stdout, "revoked %s at its authorization server\n", key)
	case errors.Is(rerr, oauth.ErrNoRevocation), errors.Is(rerr, credentials.ErrNoClient):
		fmt.Fprintf(o.Stdout, "not revoked at the server: %v\n", rerr)
		rerr = nil
	default:
		fmt.Fprintf(o.Stderr, "agentbot connections revoke: revoking at the server failed: %v (deleting it here all the same)\n", rerr)
	}
	if err := v.Delete(ctx, team, user, server); err != nil {
		fmt.Fprintf(o.Stderr, "agentbot connections revoke: %v\n", err)
		return 1
	}
	fmt.Fprintf(o.Stdout, "deleted connection %s\n", key)
	if rerr != nil {
		return 1
	}
	return 0
}

// VaultConnections is a Vault as bot.Connections: serve wires it into
// bot.Config.Connections, so /agent connections lists from the Vault and
// /agent disconnect revokes with its stored client over HTTP.
type VaultConnections struct {
	Vault *credentials.Vault
	// HTTP makes the revocation requests (nil: a client with
	// RevokeTimeout).
	HTTP *http.Client
}

var _ bot.Connections = VaultConnections{}

// List lists the connections f selects, without secrets.
func (c VaultConnections) List(ctx context.Context, f storage.CredentialFilter) ([]storage.CredentialInfo, error) {
	return c.Vault.List(ctx, f)
}

// Revoke revokes the connection of (team, user, server) at its
// authorization server (credentials.Vault.Revoke).
func (c VaultConnections) Revoke(ctx context.Context, team, user, server string) error {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: RevokeTimeout}
	}
	return c.Vault.Revoke(ctx, hc, team, user, server)
}

// Delete forgets the connection of (team, user, server).
func (c VaultConnections) Delete(ctx context.Context, team, user, server string) error {
	return c.Vault.Delete(ctx, team, user, server)
}
