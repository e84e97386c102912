// Package credentials is the one place where MCP authorization's secrets
// are sealed and opened: a Vault turns oauth.Token, oauth.Client and
// oauth.Flow values into sealed records of a store's Credentials role
// (storage/secretbox, AES-256-GCM under the operator's key) and back, so
// no store ever sees a plaintext token, client secret or PKCE verifier.
//
// Each record is sealed bound to its key: a token to its (team, user,
// server), a client to its server, a flow to its state; a record copied
// to another key does not open. A flow is stored under a hash of its
// state, so the store does not hold the state either. The Vault's errors
// and logs never hold a secret: they name records by their keys, and the
// values log redacted (their LogValue).
package credentials

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/secretbox"
)

// Vault seals and opens credentials in a store. It is safe for
// concurrent use.
type Vault struct {
	st  storage.Credentials
	kr  *secretbox.Keyring
	log *slog.Logger
}

// New returns a Vault over st that seals under kr's current key. A nil kr
// is secretbox.ErrNoKey: without a key nothing can be kept. log receives
// debug records of what is stored and taken, never a secret (nil: none).
func New(st storage.Credentials, kr *secretbox.Keyring, log *slog.Logger) (*Vault, error) {
	if kr == nil {
		return nil, secretbox.ErrNoKey
	}
	if st == nil {
		return nil, errors.New("credentials: no store")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Vault{st: st, kr: kr, log: log}, nil
}

// adOf is the additional data a credential of key is sealed with.
func adOf(key string) []byte { return []byte("agentbot credential\x00" + key) }

// flowKey is the key a flow is stored under: a hash of its state.
func flowKey(state string) string {
	sum := sha256.Sum256([]byte("agentbot flow state\x00" + state))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// flowAD is the additional data a flow stored under fkey is sealed with.
func flowAD(fkey string) []byte { return []byte("agentbot flow\x00" + fkey) }

// put seals v (JSON) into the credential of info's key.
func (vt *Vault) put(ctx context.Context, info storage.CredentialInfo, v any) error {
	key, err := storage.CredentialKey(info.Team, info.User, info.Server)
	if err != nil {
		return fmt.Errorf("store credential: %w", err)
	}
	plain, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store credential %s: encode: %w", key, err)
	}
	sealed, err := vt.kr.Seal(plain, adOf(key))
	clear(plain)
	if err != nil {
		return fmt.Errorf("store credential %s: %w", key, err)
	}
	if err := vt.st.PutCredential(ctx, storage.Credential{CredentialInfo: info, Sealed: sealed}); err != nil {
		return err
	}
	return nil
}

// open opens the credential of (team, user, server) into v.
func (vt *Vault) open(ctx context.Context, team, user, server string, v any) (storage.CredentialInfo, error) {
	key, err := storage.CredentialKey(team, user, server)
	if err != nil {
		return storage.CredentialInfo{}, fmt.Errorf("credential: %w", err)
	}
	c, err := vt.st.Credential(ctx, team, user, server)
	if err != nil {
		return storage.CredentialInfo{}, err
	}
	plain, err := vt.kr.Open(c.Sealed, adOf(key))
	if err != nil {
		return storage.CredentialInfo{}, fmt.Errorf("credential %s: %w", key, err)
	}
	err = json.Unmarshal(plain, v)
	clear(plain)
	if err != nil {
		// The decoder's message could quote a value: leave it out.
		return storage.CredentialInfo{}, fmt.Errorf("credential %s: the opened record does not decode", key)
	}
	return c.CredentialInfo, nil
}

// PutToken stores t as the credential of (team, user, server): user is a
// Slack user id or storage.ServiceUser; account names the account at the
// server where known. The listing shows t's scopes and expiry.
func (vt *Vault) PutToken(ctx context.Context, team, user, server, account string, t oauth.Token) error {
	info := storage.CredentialInfo{Team: team, User: user, Server: server, Account: account, Scopes: t.Scopes, Expiry: t.Expiry}
	if err := vt.put(ctx, info, t); err != nil {
		return err
	}
	vt.log.DebugContext(ctx, "credential stored", "team", team, "user", user, "server", server, "token", t)
	return nil
}

// Token returns the token stored for (team, user, server); none is an
// error matching storage.ErrNotFound.
func (vt *Vault) Token(ctx context.Context, team, user, server string) (oauth.Token, error) {
	var t oauth.Token
	if _, err := vt.open(ctx, team, user, server, &t); err != nil {
		return oauth.Token{}, err
	}
	vt.log.DebugContext(ctx, "credential read", "team", team, "user", user, "server", server, "token", t)
	return t, nil
}

// PutClient stores agentbot's registered client at server (its secret
// sealed with it), under team "" and storage.ClientUser; the listing
// shows the secret's expiry.
func (vt *Vault) PutClient(ctx context.Context, server string, c oauth.Client) error {
	info := storage.CredentialInfo{User: storage.ClientUser, Server: server, Expiry: c.SecretExpiresAt}
	if err := vt.put(ctx, info, c); err != nil {
		return err
	}
	vt.log.DebugContext(ctx, "client stored", "server", server, "client", c)
	return nil
}

// Client returns the client stored for server; none is an error matching
// storage.ErrNotFound.
func (vt *Vault) Client(ctx context.Context, server string) (oauth.Client, error) {
	var c oauth.Client
	if _, err := vt.open(ctx, "", storage.ClientUser, server, &c); err != nil {
		return oauth.Client{}, err
	}
	return c, nil
}

// Delete forgets the credential of (team, user, server). Revoking it at
// the server first is the caller's (oauth.Revoke).
func (vt *Vault) Delete(ctx context.Context, team, user, server string) error {
	if err := vt.st.DeleteCredential(ctx, team, user, server); err != nil {
		return err
	}
	vt.log.DebugContext(ctx, "credential deleted", "team", team, "user", user, "server", server)
	return nil
}

// List lists the credentials f selects, without secrets.
func (vt *Vault) List(ctx context.Context, f storage.CredentialFilter) ([]storage.CredentialInfo, error) {
	return vt.st.ListCredentials(ctx, f)
}

// PutFlow stores a flow in progress until its expiry, sealed, under a
// hash of its state.
func (vt *Vault) PutFlow(ctx context.Context, f oauth.Flow) error {
	if f.State == "" {
		return errors.New("store flow: no state")
	}
	if f.Expires.IsZero() {
		return errors.New("store flow: no expiry")
	}
	fkey := flowKey(f.State)
	plain, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("store flow: encode: %w", err)
	}
	sealed, err := vt.kr.Seal(plain, flowAD(fkey))
	clear(plain)
	if err != nil {
		return fmt.Errorf("store flow: %w", err)
	}
	if err := vt.st.PutFlow(ctx, fkey, sealed, f.Expires); err != nil {
		return err
	}
	vt.log.DebugContext(ctx, "flow stored", "flow", f)
	return nil
}

// TakeFlow returns the flow of state and deletes it, so a state serves
// once; taken already, expired or unknown is an error matching
// storage.ErrNotFound. The caller then checks the rest (oauth.Finish).
func (vt *Vault) TakeFlow(ctx context.Context, state string) (oauth.Flow, error) {
	if state == "" {
		return oauth.Flow{}, fmt.Errorf("take flow: no state: %w", storage.ErrNotFound)
	}
	fkey := flowKey(state)
	sealed, err := vt.st.TakeFlow(ctx, fkey)
	if err != nil {
		return oauth.Flow{}, err
	}
	plain, err := vt.kr.Open(sealed, flowAD(fkey))
	if err != nil {
		return oauth.Flow{}, fmt.Errorf("take flow: %w", err)
	}
	var f oauth.Flow
	err = json.Unmarshal(plain, &f)
	clear(plain)
	if err != nil || f.State != state {
		return oauth.Flow{}, errors.New("take flow: the opened record is not this state's flow")
	}
	vt.log.DebugContext(ctx, "flow taken", "flow", f)
	return f, nil
}

// RotateReport is what Rotate did.
type RotateReport struct {
	// Resealed were sealed under an older key and now are under the
	// current one; Current were already.
	Resealed, Current int
	// Failed name the credentials that could not be opened, with why.
	Failed []string
}

// Rotate re-seals every credential under the keyring's current key,
// keeping its description and its Updated time; one that does not open
// (sealed under a key the keyring lacks, or damaged) is reported in
// Failed and left as it is, and the error counts them. Flows are not
// re-sealed: they live minutes; keep the older key until they expired.
// Run it with the bot stopped: a token refreshed during the rotation
// could be overwritten with the one it replaced.
func (vt *Vault) Rotate(ctx context.Context) (RotateReport, error) {
	var rep RotateReport
	list, err := vt.st.ListCredentials(ctx, storage.CredentialFilter{})
	if err != nil {
		return rep, err
	}
	cur := vt.kr.Current()
	for _, info := range list {
		key, err := storage.CredentialKey(info.Team, info.User, info.Server)
		if err != nil {
			return rep, err
		}
		c, err := vt.st.Credential(ctx, info.Team, info.User, info.Server)
		if errors.Is(err, storage.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return rep, err
		}
		if id, err := secretbox.KeyID(c.Sealed); err == nil && id == cur {
			rep.Current++
			continue
		}
		plain, err := vt.kr.Open(c.Sealed, adOf(key))
		if err != nil {
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %v", key, err))
			continue
		}
		c.Sealed, err = vt.kr.Seal(plain, adOf(key))
		clear(plain)
		if err != nil {
			return rep, fmt.Errorf("re-seal %s: %w", key, err)
		}
		if err := vt.st.PutCredential(ctx, c); err != nil {
			return rep, err
		}
		rep.Resealed++
		vt.log.DebugContext(ctx, "credential re-sealed", "team", info.Team, "user", info.User, "server", info.Server, "key", cur)
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("%d credential(s) could not be opened to re-seal", len(rep.Failed))
	}
	return rep, nil
}

// ErrNoClient: no registered client is stored for the server, so a token
// cannot be revoked there (Revoke).
var ErrNoClient = errors.New("credentials: no client is stored for the server to revoke with")

// Revoke revokes the token of (team, user, server) at its authorization
// server (oauth.Revoke, RFC 7009) with the client stored for server, over
// hc (nil: http.DefaultClient). It does not forget the token: Delete
// does, whatever Revoke said. No token is an error matching
// storage.ErrNotFound; no stored client is ErrNoClient; a server without
// a revocation endpoint is oauth.ErrNoRevocation. Its errors hold no
// secret.
func (vt *Vault) Revoke(ctx context.Context, hc *http.Client, team, user, server string) error {
	t, err := vt.Token(ctx, team, user, server)
	if err != nil {
		return err
	}
	c, err := vt.Client(ctx, server)
	if errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("%w (%s)", ErrNoClient, server)
	}
	if err != nil {
		return err
	}
	if err := oauth.Revoke(ctx, hc, c, t); err != nil {
		return err
	}
	vt.log.DebugContext(ctx, "credential revoked", "team", team, "user", user, "server", server)
	return nil
}
