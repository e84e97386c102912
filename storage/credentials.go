package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Credentials are what people and service identities authorized at MCP
// servers (OAuth tokens and registered clients), and the authorization
// flows still waiting for their redirect. The stores keep them sealed:
// Sealed and a flow's bytes are ciphertext (storage/secretbox, sealed by
// storage/credentials' Vault, the one place that sees plaintext), beside
// the few fields that are not secret and that listings show.
type Credentials interface {
	// PutCredential stores c under (c.Team, c.User, c.Server), replacing
	// what was there. A zero c.Updated is the store's now.
	PutCredential(ctx context.Context, c Credential) error
	// Credential returns the credential of (team, user, server); none is
	// an error matching ErrNotFound.
	Credential(ctx context.Context, team, user, server string) (Credential, error)
	// DeleteCredential removes the credential of (team, user, server);
	// none is not an error.
	DeleteCredential(ctx context.Context, team, user, server string) error
	// ListCredentials lists the credentials f selects, without their
	// sealed bytes, by team, user and server.
	ListCredentials(ctx context.Context, f CredentialFilter) ([]CredentialInfo, error)
	// PutFlow stores a pending authorization flow's sealed bytes under
	// its state until expires, replacing one of the same state.
	PutFlow(ctx context.Context, state string, sealed []byte, expires time.Time) error
	// TakeFlow returns the sealed bytes of the flow of state and deletes
	// it, in one transaction, so a state serves once: a flow taken
	// already, expired (on the store's clock) or never put is an error
	// matching ErrNotFound.
	TakeFlow(ctx context.Context, state string) ([]byte, error)
}

// ServiceUser is the user of a service identity's credential: the one
// identity everyone acting through a server acts as. No Slack user id
// looks like it.
const ServiceUser = "(service)"

// ClientUser is the user of the record that holds agentbot's registered
// client at a server (oauth.Client, with its secret sealed): team "",
// ClientUser, the server.
const ClientUser = "(client)"

// CredentialInfo is a credential without its secret: what `/agent
// connections` and `agentbot connections list` show.
type CredentialInfo struct {
	// Team is the workspace ("" for none, as in the terminal).
	Team string `json:"team"`
	// User is the Slack user id, ServiceUser or ClientUser.
	User string `json:"user"`
	// Server is the MCP server's name in the config.
	Server string `json:"server"`
	// Account is the account at the server, where known.
	Account string `json:"account,omitempty"`
	// Scopes are the granted scopes.
	Scopes []string `json:"scopes,omitempty"`
	// Expiry is when the access token expires; zero when unknown.
	Expiry time.Time `json:"expiry,omitzero"`
	// Updated is when the credential was last stored.
	Updated time.Time `json:"updated"`
}

// Credential is a stored credential: its description and the sealed
// secret.
type Credential struct {
	CredentialInfo
	// Sealed is the secret, sealed (storage/secretbox); never plaintext.
	Sealed []byte `json:"sealed"`
}

// CredentialFilter selects credentials: each field that is not "" must
// match. The zero filter selects all.
type CredentialFilter struct {
	Team, User, Server string
}

// Match reports whether f selects c.
func (f CredentialFilter) Match(c CredentialInfo) bool {
	return (f.Team == "" || f.Team == c.Team) && (f.User == "" || f.User == c.User) && (f.Server == "" || f.Server == c.Server)
}

// MaxSealed bounds a credential's or a flow's sealed bytes.
const MaxSealed = 64 << 10

// maxScopes bounds a credential's scopes.
const maxScopes = 256

// CredentialKey is a credential's "team/user/server" key: team may be
// empty, user and server may not, and none may hold '/'. Every store keys
// credentials with it, and storage/credentials binds the sealed bytes to
// it.
func CredentialKey(team, user, server string) (string, error) {
	if err := CheckKey("credential user", user); err != nil {
		return "", err
	}
	if err := CheckKey("credential server", server); err != nil {
		return "", err
	}
	if len(team) > MaxKeyLen {
		return "", fmt.Errorf("credential team too long (%d bytes, max %d)", len(team), MaxKeyLen)
	}
	if strings.ContainsAny(team+user+server, "/\x00") {
		return "", fmt.Errorf("credential team %q, user %q or server %q contains '/' or NUL", team, user, server)
	}
	return team + "/" + user + "/" + server, nil
}

// CheckCredential checks what every store's PutCredential is given: the
// key, sealed bytes (present, at most MaxSealed), the account's length and
// the scopes (at most 256, none empty or oversized).
func CheckCredential(c Credential) error {
	key, err := CredentialKey(c.Team, c.User, c.Server)
	if err != nil {
		return fmt.Errorf("put credential: %w", err)
	}
	if len(c.Sealed) == 0 {
		return fmt.Errorf("put credential %s: no sealed bytes", key)
	}
	if len(c.Sealed) > MaxSealed {
		return fmt.Errorf("put credential %s: sealed bytes too long (%d, max %d)", key, len(c.Sealed), MaxSealed)
	}
	if len(c.Account) > MaxKeyLen {
		return fmt.Errorf("put credential %s: account too long (%d bytes, max %d)", key, len(c.Account), MaxKeyLen)
	}
	if len(c.Scopes) > maxScopes {
		return fmt.Errorf("put credential %s: too many scopes (%d, max %d)", key, len(c.Scopes), maxScopes)
	}
	for _, s := range c.Scopes {
		if err := CheckKey("scope", s); err != nil {
			return fmt.Errorf("put credential %s: %w", key, err)
		}
	}
	return nil
}

// CheckFlow checks what every store's PutFlow is given: the state (not
// empty or oversized), sealed bytes (present, at most MaxSealed) and an
// expiry.
func CheckFlow(state string, sealed []byte, expires time.Time) error {
	if err := CheckKey("flow state", state); err != nil {
		return fmt.Errorf("put flow: %w", err)
	}
	if len(sealed) == 0 {
		return errors.New("put flow: no sealed bytes")
	}
	if len(sealed) > MaxSealed {
		return fmt.Errorf("put flow: sealed bytes too long (%d, max %d)", len(sealed), MaxSealed)
	}
	if expires.IsZero() {
		return errors.New("put flow: no expiry")
	}
	return nil
}
