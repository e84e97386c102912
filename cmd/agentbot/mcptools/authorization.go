package mcptools

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"agentbot/engine/mcp"
	"agentbot/engine/mcp/connect"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// The credentials Vault is the store of MCP authorization.
var _ connect.Store = (*credentials.Vault)(nil)

// AuthSettings are the settings the MCP servers' authorization needs: the
// public URL people connect through, and the address it listens on (named
// in errors).
type AuthSettings struct {
	PublicURL, Listen string
}

// Auth is the MCP servers' authorization: the store-backed connector (an
// mcp.Authorizer) and the vault it seals credentials in; both nil when no
// server asks for OAuth.
type Auth struct {
	Connector *connect.Connector
	Vault     *credentials.Vault
}

// RefusedError is a configuration that cannot start: OAuth servers without
// the secret key or the public URL they need.
type RefusedError struct{ Reason string }

// Error says what is missing and what to set.
func (e *RefusedError) Error() string { return e.Reason }

// Authorization makes the store-backed authorizer of the HTTP servers of
// mc with identity user or service: their tokens are sealed under the
// secret key (AGENTBOT_SECRET_KEY or _FILE, read through getenv) and
// people connect through the public side (AGENTBOT_PUBLIC_URL). A config
// that writes identity user or service (or oauth settings) without a key
// or a public URL is refused (*RefusedError); one with only static (and
// stdio) servers needs neither, and a server that is user only by default
// (no headers, no identity written) is left without authorization, with a
// warning: it works while it asks for none.
func Authorization(mc *mcp.Config, set AuthSettings, st storage.Credentials, getenv func(string) string, log *slog.Logger) (Auth, error) {
	oauthServers, implied := oauthServersOf(mc)
	kr, err := secretbox.Load(getenv)
	if len(oauthServers) == 0 {
		if len(implied) == 0 {
			return Auth{}, nil
		}
		if errors.Is(err, secretbox.ErrNoKey) || err == nil && set.PublicURL == "" {
			log.Warn("mcp servers without headers are identity user by default; one that asks for OAuth stays unavailable until AGENTBOT_SECRET_KEY and AGENTBOT_PUBLIC_URL are set",
				"servers", strings.Join(implied, ","))
			return Auth{}, nil
		}
		oauthServers = implied
	}
	if reason := refusal(oauthServers, set, err); reason != "" {
		return Auth{}, &RefusedError{Reason: reason}
	}
	vault, err := credentials.New(st, kr, log)
	if err != nil {
		return Auth{}, err
	}
	return Auth{Vault: vault, Connector: &connect.Connector{
		Store: vault, NotFound: storage.ErrNotFound, ServiceUser: storage.ServiceUser,
		PublicURL: set.PublicURL, ClientName: "agentbot", Log: log,
	}}, nil
}

// oauthServersOf names the HTTP servers of mc whose identity is user or
// service (OAuth), and apart those that are user only by default (no
// headers, no identity and no oauth settings written).
func oauthServersOf(mc *mcp.Config) (oauthServers, implied []string) {
	if mc == nil {
		return nil, nil
	}
	for i := range mc.Servers {
		srv := &mc.Servers[i]
		switch id := mcp.IdentityOf(srv); {
		case id != mcp.IdentityUser && id != mcp.IdentityService:
		case srv.IdentityImplied && srv.OAuth.ClientID == "" && len(srv.OAuth.Scopes) == 0:
			implied = append(implied, srv.Name)
		default:
			oauthServers = append(oauthServers, srv.Name)
		}
	}
	return oauthServers, implied
}

// refusal says why OAuth servers cannot start ("" when they can): the
// secret key is missing or bad (keyErr is secretbox.Load's), or the public
// URL is not set.
func refusal(oauthServers []string, set AuthSettings, keyErr error) string {
	which := fmt.Sprintf("the MCP servers %s have identity user or service (OAuth)", strings.Join(oauthServers, ", "))
	switch {
	case errors.Is(keyErr, secretbox.ErrNoKey):
		return fmt.Sprintf("%s: their tokens are stored encrypted, and there is %v; or give those servers identity: static", which, keyErr)
	case keyErr != nil:
		return fmt.Sprintf("%s: the secret key: %v", which, keyErr)
	case set.PublicURL == "":
		return fmt.Sprintf("%s: people connect through agentbot's public side, and AGENTBOT_PUBLIC_URL (--public-url) is not set: set it to the https address that reaches AGENTBOT_LISTEN (%s); or give those servers identity: static", which, set.Listen)
	}
	return ""
}
