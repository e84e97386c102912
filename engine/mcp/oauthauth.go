package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"agentbot/engine/mcp/oauth"
)

// OAuthAuthorizer is an Authorizer that runs MCP authorization itself
// (package oauth) and keeps the tokens in memory, one grant per server
// and identity: discovery from the challenge, a client in the
// specification's order (client ID metadata document, the server's
// pre-registered oauth.client_id, dynamic registration), the scopes of
// the challenge (or the config's, or the resource's scopes_supported),
// step-up on insufficient_scope, refresh, and the client credentials
// grant for identity service with a client secret or private key
// (private_key_jwt) where the authorization server offers it. The
// authorization code flow goes through Browse, which sends the person
// (or, in tests, an HTTP client) to the authorization URL.
//
// The bot's per-person authorizer, with tokens stored encrypted and a
// Connect button for Browse, is built on the same steps.
type OAuthAuthorizer struct {
	// HTTPClient makes the discovery, registration and token requests;
	// nil is http.DefaultClient.
	HTTPClient *http.Client
	// RedirectURL is the redirect URI of authorization code flows.
	RedirectURL string
	// MetadataDocumentURL is where agentbot serves its client ID metadata
	// document; empty when it serves none.
	MetadataDocumentURL string
	// ClientName names agentbot in dynamic registrations.
	ClientName string
	// Browse sends the person to authURL and returns the query of the
	// redirect to RedirectURL (code, state, iss; or error). Nil: a server
	// that needs the authorization code flow gets an error wrapping
	// ErrAuthorizationNeeded.
	Browse func(ctx context.Context, authURL string) (url.Values, error)

	mu     sync.Mutex
	grants map[string]*grant
}

// grant is what one server and identity were granted.
type grant struct {
	mu      sync.Mutex
	tok     oauth.Token
	client  oauth.Client // for refresh; empty for client credentials
	d       oauth.Discovery
	creds   *oauth.Credentials // client credentials grant: get a new token with them
	clients map[string]oauth.Client
}

func (a *OAuthAuthorizer) grant(s *Server, who Identity) *grant {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.grants == nil {
		a.grants = map[string]*grant{}
	}
	key := s.Name + "\x00" + who.Kind + "\x00" + who.Team + "\x00" + who.User
	g := a.grants[key]
	if g == nil {
		g = &grant{clients: map[string]oauth.Client{}}
		a.grants[key] = g
	}
	return g
}

func (a *OAuthAuthorizer) client() *http.Client {
	if a.HTTPClient != nil {
		return a.HTTPClient
	}
	return http.DefaultClient
}

// Token is the grant's token, refreshed (or, for client credentials,
// obtained again) when it has expired; zero when there is none yet or
// the refresh failed, so the server's 401 brings Authorize.
func (a *OAuthAuthorizer) Token(ctx context.Context, s *Server, who Identity) (oauth.Token, error) {
	g := a.grant(s, who)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tok.AccessToken == "" || !g.tok.Expired(time.Now()) {
		return g.tok, nil
	}
	switch {
	case g.creds != nil:
		t, err := oauth.ClientCredentials(ctx, a.client(), g.d, *g.creds)
		if err != nil {
			g.tok = oauth.Token{}
			return oauth.Token{}, nil
		}
		g.tok = t
	case g.tok.RefreshToken != "":
		t, err := oauth.Refresh(ctx, a.client(), g.client, g.tok)
		if err != nil {
			g.tok = oauth.Token{}
			return oauth.Token{}, nil
		}
		g.tok = t
	default:
		g.tok = oauth.Token{}
	}
	return g.tok, nil
}

// Authorize answers a challenge: with the current token when another
// request already replaced sent; else by refreshing (a 401 to a token
// that has a refresh token), or by authorizing again for the challenge's
// scopes. A step-up that would ask for no scope beyond those granted is
// refused: the server would refuse again.
func (a *OAuthAuthorizer) Authorize(ctx context.Context, s *Server, who Identity, sent oauth.Token, ch oauth.Challenge) (oauth.Token, error) {
	g := a.grant(s, who)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tok.AccessToken != "" && g.tok.AccessToken != sent.AccessToken {
		return g.tok, nil
	}
	scopes, t, err := a.answer(ctx, s, g, ch)
	if err != nil || t.AccessToken != "" {
		return t, err
	}
	g.tok = oauth.Token{}
	d, err := oauth.Discover(ctx, a.client(), s.URL, ch.WWWAuthenticate)
	if err != nil {
		return oauth.Token{}, err
	}
	if scopes != nil {
		d.Scopes = scopes
	}
	g.d = d
	if who.Kind == IdentityService && s.OAuth.Confidential() &&
		slices.Contains(d.AuthServer.GrantTypesSupported, "client_credentials") {
		return a.serviceToken(ctx, s, g, d)
	}
	return a.codeFlow(ctx, s, who, g, d)
}

// answer reads a challenge: the scopes to authorize for (a step-up's
// union, or the configured ones), or, for a 401 to a token that has a
// refresh token, the refreshed token itself. A step-up that would ask
// for no scope beyond those granted is refused: the server would refuse
// again.
func (a *OAuthAuthorizer) answer(ctx context.Context, s *Server, g *grant, ch oauth.Challenge) ([]string, oauth.Token, error) {
	switch ch.Kind {
	case oauth.InsufficientScope:
		scopes := oauth.StepUpScopes(g.tok.Scopes, ch)
		if g.tok.AccessToken != "" && !hasNew(scopes, g.tok.Scopes) {
			return nil, oauth.Token{}, fmt.Errorf("the server refuses the scopes it asked for (%v); not asking again", ch.Scopes)
		}
		return scopes, oauth.Token{}, nil
	case oauth.NeedsAuthorization:
		if g.tok.RefreshToken != "" && g.creds == nil {
			if t, err := oauth.Refresh(ctx, a.client(), g.client, g.tok); err == nil {
				g.tok = t
				return nil, t, nil
			}
		}
		if len(s.OAuth.Scopes) > 0 {
			return slices.Clone(s.OAuth.Scopes), oauth.Token{}, nil
		}
		return nil, oauth.Token{}, nil
	}
	return nil, oauth.Token{}, errors.New("no challenge to answer")
}

// serviceToken gets a service identity's token with client credentials.
func (a *OAuthAuthorizer) serviceToken(ctx context.Context, s *Server, g *grant, d oauth.Discovery) (oauth.Token, error) {
	cr := s.OAuth.Credentials()
	t, err := oauth.ClientCredentials(ctx, a.client(), d, *cr)
	if err != nil {
		return oauth.Token{}, err
	}
	g.tok, g.creds = t, cr
	return t, nil
}

// codeFlow runs the authorization code flow at d for who, through Browse.
func (a *OAuthAuthorizer) codeFlow(ctx context.Context, s *Server, who Identity, g *grant, d oauth.Discovery) (oauth.Token, error) {
	c, err := a.register(ctx, s, g, d)
	if err != nil {
		return oauth.Token{}, err
	}
	if a.Browse == nil {
		return oauth.Token{}, fmt.Errorf("%w: %s needs the authorization code flow at %s, and nothing can send a person there", ErrAuthorizationNeeded, who, d.AuthServer.Issuer)
	}
	f, authURL, err := oauth.Begin(d, c, oauth.BeginOptions{RedirectURL: a.RedirectURL})
	if err != nil {
		return oauth.Token{}, err
	}
	q, err := a.Browse(ctx, authURL)
	if err != nil {
		return oauth.Token{}, fmt.Errorf("authorization at %s: %w", d.AuthServer.Issuer, err)
	}
	t, err := oauth.Finish(ctx, a.client(), c, f, q)
	if err != nil {
		return oauth.Token{}, err
	}
	g.tok, g.client, g.creds = t, c, nil
	return t, nil
}

// register is the client at d's authorization server: the one registered
// before, else a new one (oauth.Register).
func (a *OAuthAuthorizer) register(ctx context.Context, s *Server, g *grant, d oauth.Discovery) (oauth.Client, error) {
	if c, ok := g.clients[d.AuthServer.Issuer]; ok && (c.SecretExpiresAt.IsZero() || time.Now().Before(c.SecretExpiresAt)) {
		return c, nil
	}
	o := oauth.RegisterOptions{
		MetadataDocumentURL: a.MetadataDocumentURL,
		Metadata:            oauth.ClientMetadata{ClientName: a.ClientName, RedirectURIs: []string{a.RedirectURL}},
	}
	o.Preregistered = s.OAuth.Credentials()
	c, err := oauth.Register(ctx, a.client(), d, o)
	if err != nil {
		return oauth.Client{}, err
	}
	g.clients[d.AuthServer.Issuer] = c
	return c, nil
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
