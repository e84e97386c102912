// Package connect is MCP authorization for the bot: an mcp.Authorizer
// whose tokens, registered clients and flows in progress live in a store
// (the credentials Vault, which seals them), so that a person connects
// once, any replica may finish a flow another began, and a restart loses
// nothing.
//
// A Connector answers the transport (Token, Authorize); when a person
// must act, Authorize fails with a *NeedsConnection (wrapping
// mcp.ErrAuthorizationNeeded) that names the server and the identity, the
// bot asks that person, and ConnectURL gives the link to send them to.
// Handler is the public side: the OAuth redirect (/oauth/callback) and
// agentbot's client ID metadata document (/oauth/client.json).
//
// No token, code, state, verifier, client secret or private key is ever
// logged or put in an error or a page by this package; the Store seals
// them.
package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"agentbot/engine/mcp"
	"agentbot/engine/mcp/oauth"
)

// Store keeps the credentials: the credentials Vault's methods (it
// satisfies Store as it is). Tokens are kept per (team, user, server),
// clients per server, flows by their state until taken.
type Store interface {
	PutToken(ctx context.Context, team, user, server, account string, t oauth.Token) error
	Token(ctx context.Context, team, user, server string) (oauth.Token, error)
	PutClient(ctx context.Context, server string, c oauth.Client) error
	Client(ctx context.Context, server string) (oauth.Client, error)
	PutFlow(ctx context.Context, f oauth.Flow) error
	TakeFlow(ctx context.Context, state string) (oauth.Flow, error)
	Delete(ctx context.Context, team, user, server string) error
}

// The paths of the public side, under the public URL.
const (
	CallbackPath = "/oauth/callback"
	ClientPath   = "/oauth/client.json"
)

// The Caller fields of a flow this package begins.
const (
	callerTeam   = "team"
	callerUser   = "user"
	callerServer = "server"
	callerFrom   = "from"
)

// Connected is a finished flow: who connected which server, and where
// they were asked (the From given to ConnectURLFrom, such as the thread
// whose turn waits; "" when none).
type Connected struct {
	Team, User, Server, From string
}

// NeedsConnection is the error of a request whose identity has no usable
// token and must be authorized by a person: for an identity user, the
// person (Team, User) connects their own account; for identity service,
// an admin connects the service identity. It wraps
// mcp.ErrAuthorizationNeeded.
type NeedsConnection struct {
	// Server is the server's name.
	Server string
	// Who is the identity to connect.
	Who mcp.Identity
	// Reason says why (no token yet, refused, expired); no secret.
	Reason string
}

// Error names the server, the identity and the reason.
func (e *NeedsConnection) Error() string {
	s := fmt.Sprintf("%s: %s must connect %s", mcp.ErrAuthorizationNeeded, e.Who, e.Server)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

// Unwrap is mcp.ErrAuthorizationNeeded.
func (e *NeedsConnection) Unwrap() error { return mcp.ErrAuthorizationNeeded }

// Connector is the store-backed mcp.Authorizer, the builder of connect
// links, and (Handler) the public side that finishes them. Set the fields
// before first use; it is safe for concurrent use.
type Connector struct {
	// Store keeps tokens, clients and flows. Required.
	Store Store
	// NotFound is the error (matched with errors.Is) the store answers
	// for a record it does not have. Required.
	NotFound error
	// ServiceUser is the user under which a service identity's token is
	// stored (the store's service user).
	ServiceUser string
	// PublicURL is the address people and servers reach agentbot at; the
	// redirect is PublicURL/oauth/callback and the client ID metadata
	// document PublicURL/oauth/client.json. Required for ConnectURL.
	PublicURL string
	// ClientName names agentbot on consent screens.
	ClientName string
	// HTTPClient makes the discovery, registration and token requests;
	// nil is http.DefaultClient.
	HTTPClient *http.Client
	// FlowTTL is how long a connect link may be finished; zero is
	// oauth.DefaultFlowTTL.
	FlowTTL time.Duration
	// OnConnected, when set, is called after a flow finished and its
	// token was stored (to resume the person's waiting turn), on the
	// replica that finished it.
	OnConnected func(Connected)
	// Log receives what happened, never a secret; nil: none.
	Log *slog.Logger

	mu         sync.Mutex
	locks      map[string]*sync.Mutex
	challenges map[string]oauth.Challenge
}

var _ mcp.Authorizer = (*Connector)(nil)

func (c *Connector) client() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return http.DefaultClient
}

func (c *Connector) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

// owner is the (team, user) a token of who is stored under.
func (c *Connector) owner(who mcp.Identity) (team, user string) {
	if who.Kind == mcp.IdentityService {
		return who.Team, c.ServiceUser
	}
	return who.Team, who.User
}

func keyOf(server string, who mcp.Identity) string {
	return server + "\x00" + who.Kind + "\x00" + who.Team + "\x00" + who.User
}

// lock serializes, in this process, the refreshes and authorizations of
// one server and identity.
func (c *Connector) lock(server string, who mcp.Identity) func() {
	k := keyOf(server, who)
	c.mu.Lock()
	if c.locks == nil {
		c.locks = map[string]*sync.Mutex{}
	}
	l := c.locks[k]
	if l == nil {
		l = &sync.Mutex{}
		c.locks[k] = l
	}
	c.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// stored is the token of (server, who); zero when there is none.
func (c *Connector) stored(ctx context.Context, server string, who mcp.Identity) (oauth.Token, error) {
	team, user := c.owner(who)
	t, err := c.Store.Token(ctx, team, user, server)
	if c.NotFound != nil && errors.Is(err, c.NotFound) {
		return oauth.Token{}, nil
	}
	if err != nil {
		return oauth.Token{}, fmt.Errorf("the token of %s at %s: %w", who, server, err)
	}
	return t, nil
}

func (c *Connector) put(ctx context.Context, server string, who mcp.Identity, t oauth.Token) error {
	team, user := c.owner(who)
	if err := c.Store.PutToken(ctx, team, user, server, "", t); err != nil {
		return fmt.Errorf("store the token of %s at %s: %w", who, server, err)
	}
	return nil
}

// Token is the stored token of s and who; when it has expired, it is
// refreshed (or, for a service identity with client credentials, obtained
// again) and the new one stored. A refresh token the server no longer
// accepts deletes the token and gives a *NeedsConnection. A zero token
// (none stored, or expired without a way to renew it) lets the request
// go out without one, and the server's 401 brings Authorize.
func (c *Connector) Token(ctx context.Context, s *mcp.Server, who mcp.Identity) (oauth.Token, error) {
	t, err := c.stored(ctx, s.Name, who)
	if err != nil || t.AccessToken == "" || !t.Expired(time.Now()) {
		return t, err
	}
	defer c.lock(s.Name, who)()
	// Another request may have renewed it meanwhile.
	if t, err = c.stored(ctx, s.Name, who); err != nil || t.AccessToken == "" || !t.Expired(time.Now()) {
		return t, err
	}
	return c.renew(ctx, s, who, t)
}

// renew replaces the expired (or refused) token t: refreshed with its
// refresh token, or for a service identity with a client secret or
// private key by the client credentials grant; zero when it cannot be.
// The lock is held.
func (c *Connector) renew(ctx context.Context, s *mcp.Server, who mcp.Identity, t oauth.Token) (oauth.Token, error) {
	if t.RefreshToken == "" {
		if c.clientCredentials(s, who) {
			return c.obtainService(ctx, s, who, nil)
		}
		return oauth.Token{}, nil
	}
	cl, err := c.Store.Client(ctx, s.Name)
	if err != nil {
		return oauth.Token{}, fmt.Errorf("refresh at %s: the registered client: %w", s.Name, err)
	}
	cl = configured(s, cl)
	n, err := oauth.Refresh(ctx, c.client(), cl, t)
	if errors.Is(err, oauth.ErrInvalidGrant) {
		// Another replica may have refreshed it (and its refresh token
		// was rotated): take what is stored now, else forget it.
		if cur, err := c.stored(ctx, s.Name, who); err == nil && cur.AccessToken != "" &&
			cur.RefreshToken != t.RefreshToken && !cur.Expired(time.Now()) {
			return cur, nil
		}
		team, user := c.owner(who)
		if err := c.Store.Delete(ctx, team, user, s.Name); err != nil && !errors.Is(err, c.NotFound) {
			c.log().WarnContext(ctx, "mcp token refused, and deleting it failed", "server", s.Name, "identity", who.String(), "err", err)
		}
		c.log().InfoContext(ctx, "mcp token refused at refresh; connect again", "server", s.Name, "identity", who.String())
		return oauth.Token{}, &NeedsConnection{Server: s.Name, Who: who, Reason: "the server no longer accepts the connection"}
	}
	if err != nil {
		return oauth.Token{}, err
	}
	if err := c.put(ctx, s.Name, who, n); err != nil {
		return oauth.Token{}, err
	}
	c.log().DebugContext(ctx, "mcp token refreshed", "server", s.Name, "identity", who.String(), "token", n)
	return n, nil
}

// clientCredentials reports whether who at s is obtained with the client
// credentials grant: a service identity with a client secret or a
// private key.
func (c *Connector) clientCredentials(s *mcp.Server, who mcp.Identity) bool {
	return who.Kind == mcp.IdentityService && s.OAuth.Confidential()
}

// obtainService gets a service identity's token with the client
// credentials grant, discovering from the challenge's header (if any),
// and stores it. The lock is held.
func (c *Connector) obtainService(ctx context.Context, s *mcp.Server, who mcp.Identity, wwwAuthenticate []string) (oauth.Token, error) {
	d, err := oauth.Discover(ctx, c.client(), s.URL, wwwAuthenticate)
	if err != nil {
		return oauth.Token{}, err
	}
	if len(s.OAuth.Scopes) > 0 {
		d.Scopes = slices.Clone(s.OAuth.Scopes)
	}
	if !slices.Contains(d.AuthServer.GrantTypesSupported, "client_credentials") {
		return oauth.Token{}, &NeedsConnection{Server: s.Name, Who: who,
			Reason: fmt.Sprintf("%s offers no client credentials grant; an admin connects the service identity", d.AuthServer.Issuer)}
	}
	t, err := oauth.ClientCredentials(ctx, c.client(), d, *s.OAuth.Credentials())
	if err != nil {
		return oauth.Token{}, err
	}
	if err := c.put(ctx, s.Name, who, t); err != nil {
		return oauth.Token{}, err
	}
	c.log().DebugContext(ctx, "mcp service token obtained", "server", s.Name, "token", t)
	return t, nil
}

// Authorize answers a challenge to a request that carried sent: with the
// stored token when another request (or replica) already replaced sent;
// by refreshing, on a 401 to a refreshable token; for a service identity
// with a client secret or private key, with the client credentials
// grant. Otherwise a person must connect: a *NeedsConnection. A step-up
// that would ask for no scope beyond those granted is refused (the server
// would refuse again).
func (c *Connector) Authorize(ctx context.Context, s *mcp.Server, who mcp.Identity, sent oauth.Token, ch oauth.Challenge) (oauth.Token, error) {
	if ch.Kind != oauth.NeedsAuthorization && ch.Kind != oauth.InsufficientScope {
		return oauth.Token{}, errors.New("no challenge to answer")
	}
	defer c.lock(s.Name, who)()
	cur, err := c.stored(ctx, s.Name, who)
	if err != nil {
		return oauth.Token{}, err
	}
	if cur.AccessToken != "" && cur.AccessToken != sent.AccessToken && !cur.Expired(time.Now()) {
		return cur, nil
	}
	t, reason, err := c.retry(ctx, s, who, cur, ch)
	if err != nil || t.AccessToken != "" {
		return t, err
	}
	c.forgetRefused(ctx, s.Name, who, cur, sent, ch)
	c.remember(s.Name, who, ch)
	if c.clientCredentials(s, who) {
		t, err := c.obtainService(ctx, s, who, ch.WWWAuthenticate)
		var nc *NeedsConnection
		if !errors.As(err, &nc) {
			return t, err
		}
	}
	return oauth.Token{}, &NeedsConnection{Server: s.Name, Who: who, Reason: reason}
}

// forgetRefused deletes the stored token cur when the server refused it
// (a 401 to the request that carried it) and nothing renewed it: every
// replica then asks the person to connect again, not just this one. The
// lock is held.
func (c *Connector) forgetRefused(ctx context.Context, server string, who mcp.Identity, cur, sent oauth.Token, ch oauth.Challenge) {
	if ch.Kind != oauth.NeedsAuthorization || cur.AccessToken == "" || cur.AccessToken != sent.AccessToken {
		return
	}
	team, user := c.owner(who)
	if err := c.Store.Delete(ctx, team, user, server); err != nil && !errors.Is(err, c.NotFound) {
		c.log().WarnContext(ctx, "mcp token refused, and deleting it failed", "server", server, "identity", who.String(), "err", err)
		return
	}
	c.log().InfoContext(ctx, "mcp token refused; connect again", "server", server, "identity", who.String())
}

// retry answers a challenge with what needs no person: for a 401 to a
// refreshable token, the refreshed token; a step-up for scopes already
// granted is an error (the server would refuse again). Otherwise it says
// why a person must connect.
func (c *Connector) retry(ctx context.Context, s *mcp.Server, who mcp.Identity, cur oauth.Token, ch oauth.Challenge) (oauth.Token, string, error) {
	switch {
	case ch.Kind == oauth.InsufficientScope:
		scopes := oauth.StepUpScopes(cur.Scopes, ch)
		if cur.AccessToken != "" && !hasNew(scopes, cur.Scopes) {
			return oauth.Token{}, "", fmt.Errorf("%s refuses the scopes it asked for (%v); not asking again", s.Name, ch.Scopes)
		}
		return oauth.Token{}, fmt.Sprintf("the server asks for more scopes (%s)", strings.Join(scopes, " ")), nil
	case cur.AccessToken == "":
		return oauth.Token{}, "not connected yet", nil
	case cur.RefreshToken != "":
		t, err := c.renew(ctx, s, who, cur)
		if err != nil || t.AccessToken != "" {
			return t, "", err
		}
	}
	return oauth.Token{}, "the server refused the connection", nil
}

// remember keeps the last challenge of s and who in this process, for
// ConnectURL's discovery and scopes (another replica discovers from the
// well-known URIs).
func (c *Connector) remember(server string, who mcp.Identity, ch oauth.Challenge) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.challenges == nil {
		c.challenges = map[string]oauth.Challenge{}
	}
	c.challenges[keyOf(server, who)] = ch
}

func (c *Connector) challenge(server string, who mcp.Identity) (oauth.Challenge, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.challenges[keyOf(server, who)]
	return ch, ok
}

// redirectURL and documentURL are the public side's addresses.
func (c *Connector) redirectURL() string { return strings.TrimSuffix(c.PublicURL, "/") + CallbackPath }
func (c *Connector) documentURL() string { return strings.TrimSuffix(c.PublicURL, "/") + ClientPath }

// ConnectURL begins a flow for who at s and returns the authorization URL
// to send that person to (for a service identity, the admin): discovery
// (from the last challenge seen here, else the well-known URIs), the
// client registered for s (the stored one, else one registered now: the
// client ID metadata document at PublicURL/oauth/client.json, the
// config's pre-registered credentials, dynamic registration), and a flow
// bound to the identity's team, user and s, stored until it is finished
// or expires. The URL carries the flow's state: give it to that person
// only.
func (c *Connector) ConnectURL(ctx context.Context, s *mcp.Server, who mcp.Identity) (string, error) {
	return c.ConnectURLFrom(ctx, s, who, "")
}

// ConnectURLFrom is ConnectURL for a person asked from somewhere (the
// thread whose turn waits): the flow keeps from, and OnConnected is told
// it.
func (c *Connector) ConnectURLFrom(ctx context.Context, s *mcp.Server, who mcp.Identity, from string) (string, error) {
	if c.PublicURL == "" {
		return "", errors.New("connect: no public URL to redirect to")
	}
	var www, stepUp []string
	if ch, ok := c.challenge(s.Name, who); ok {
		www = ch.WWWAuthenticate
		if ch.Kind == oauth.InsufficientScope {
			cur, err := c.stored(ctx, s.Name, who)
			if err != nil {
				return "", err
			}
			stepUp = oauth.StepUpScopes(cur.Scopes, ch)
		}
	}
	d, err := oauth.Discover(ctx, c.client(), s.URL, www)
	if err != nil {
		return "", err
	}
	switch {
	case stepUp != nil:
		d.Scopes = stepUp
	case len(s.OAuth.Scopes) > 0:
		d.Scopes = slices.Clone(s.OAuth.Scopes)
	}
	cl, err := c.registered(ctx, s, d)
	if err != nil {
		return "", err
	}
	team, user := c.owner(who)
	f, authURL, err := oauth.Begin(d, cl, oauth.BeginOptions{
		RedirectURL: c.redirectURL(),
		TTL:         c.FlowTTL,
		Caller:      map[string]string{callerTeam: team, callerUser: user, callerServer: s.Name, callerFrom: from},
	})
	if err != nil {
		return "", err
	}
	if err := c.Store.PutFlow(ctx, f); err != nil {
		return "", fmt.Errorf("connect %s: %w", s.Name, err)
	}
	c.log().InfoContext(ctx, "mcp connect begun", "server", s.Name, "identity", who.String(), "flow", f)
	return authURL, nil
}

// registered is the client of s at d's authorization server: the stored
// one when it belongs to that server and its secret has not expired, else
// a new registration, stored.
func (c *Connector) registered(ctx context.Context, s *mcp.Server, d oauth.Discovery) (oauth.Client, error) {
	cl, err := c.Store.Client(ctx, s.Name)
	switch {
	case err == nil && c.reusable(s, d, cl):
		return configured(s, cl), nil
	case err != nil && !errors.Is(err, c.NotFound):
		return oauth.Client{}, fmt.Errorf("the registered client of %s: %w", s.Name, err)
	}
	o := oauth.RegisterOptions{
		Metadata: oauth.ClientMetadata{ClientName: c.ClientName, RedirectURIs: []string{c.redirectURL()}},
	}
	if _, err := c.document(); err == nil {
		o.MetadataDocumentURL = c.documentURL()
	}
	o.Preregistered = s.OAuth.Credentials()
	cl, err = oauth.Register(ctx, c.client(), d, o)
	if err != nil {
		return oauth.Client{}, err
	}
	if err := c.Store.PutClient(ctx, s.Name, cl); err != nil {
		return oauth.Client{}, fmt.Errorf("store the registered client of %s: %w", s.Name, err)
	}
	c.log().InfoContext(ctx, "mcp client registered", "server", s.Name, "client", cl)
	return cl, nil
}

// reusable reports whether the stored client cl still serves s at d's
// authorization server: registered there, for the redirect in use now,
// its secret not expired, and, when pre-registered, the client the
// config names, with the config's kind of credentials (secret or key).
func (c *Connector) reusable(s *mcp.Server, d oauth.Discovery, cl oauth.Client) bool {
	return strings.TrimSuffix(cl.Issuer, "/") == strings.TrimSuffix(d.AuthServer.Issuer, "/") &&
		(len(cl.RedirectURIs) == 0 || slices.Contains(cl.RedirectURIs, c.redirectURL())) &&
		(cl.SecretExpiresAt.IsZero() || time.Now().Before(cl.SecretExpiresAt)) &&
		(s.OAuth.ClientID == "" || cl.Registration != oauth.RegistrationPreregistered ||
			cl.ID == s.OAuth.ClientID && (cl.AuthMethod == oauth.AuthPrivateKeyJWT) == (s.OAuth.ClientKey != nil))
}

// configured is a stored client with the config's private key, when it
// is the pre-registered client the config names: the config's wins over
// the one stored with it (a key replaced in the config).
func configured(s *mcp.Server, cl oauth.Client) oauth.Client {
	if cl.Registration == oauth.RegistrationPreregistered && cl.ID == s.OAuth.ClientID && s.OAuth.ClientKey != nil {
		cl.Key = s.OAuth.ClientKey
	}
	return cl
}

// document is agentbot's client ID metadata document; an error when the
// public URL cannot be a client id (not https).
func (c *Connector) document() ([]byte, error) {
	if c.PublicURL == "" {
		return nil, errors.New("no public URL")
	}
	return oauth.MetadataDocument(c.documentURL(), oauth.ClientMetadata{
		ClientName: c.ClientName, RedirectURIs: []string{c.redirectURL()},
	})
}

// hasNew reports whether want holds a scope that have does not.
func hasNew(want, have []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return true
		}
	}
	return false
}
