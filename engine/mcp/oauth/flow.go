package oauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"golang.org/x/oauth2"
)

// DefaultFlowTTL is how long a Flow may be finished when BeginOptions
// gives no TTL.
const DefaultFlowTTL = 15 * time.Minute

// Flow is one authorization code flow in progress, from Begin to Finish.
// It is a plain value: the caller stores it (keyed by State) and any
// replica may finish it after a restart. It holds the PKCE verifier, so
// it is stored like a secret and never shown.
type Flow struct {
	// State is random, sent in the authorization URL and expected back in
	// the redirect. The caller looks the flow up by it and deletes it on
	// use, so it serves once.
	State string `json:"state"`
	// Verifier is the PKCE code verifier (S256).
	Verifier string `json:"code_verifier"`
	// Resource is the RFC 8707 resource the token is for.
	Resource string `json:"resource"`
	// Issuer is the authorization server's issuer.
	Issuer string `json:"issuer"`
	// IssParameterSupported: the server advertises RFC 9207's iss in
	// authorization responses, so the redirect must carry it.
	IssParameterSupported bool `json:"iss_parameter_supported,omitempty"`
	// AuthURL is the authorization endpoint.
	AuthURL string `json:"authorization_endpoint"`
	// TokenURL is the token endpoint.
	TokenURL string `json:"token_endpoint"`
	// ClientID is the client the flow was begun for.
	ClientID string `json:"client_id"`
	// Scopes are the scopes asked for.
	Scopes []string `json:"scopes,omitempty"`
	// RedirectURL is the redirect_uri of the authorization request.
	RedirectURL string `json:"redirect_uri"`
	// Created is when Begin ran.
	Created time.Time `json:"created"`
	// Expires is when the flow may no longer be finished.
	Expires time.Time `json:"expires"`
	// Caller holds the caller's own fields, such as the team, the person
	// and the server the flow binds to; this package does not read them.
	Caller map[string]string `json:"caller,omitempty"`
}

// String shows the flow without its state and verifier.
func (f Flow) String() string {
	return fmt.Sprintf("oauth.Flow{Issuer:%q Resource:%q ClientID:%q Scopes:%q Expires:%s Caller:%v State:%s Verifier:%s}",
		f.Issuer, f.Resource, f.ClientID, f.Scopes, f.Expires.Format(time.RFC3339), f.Caller, redacted(f.State), redacted(f.Verifier))
}

// GoString is String.
func (f Flow) GoString() string { return f.String() }

// LogValue logs the flow without its state and verifier.
func (f Flow) LogValue() slog.Value {
	return slog.GroupValue(slog.String("issuer", f.Issuer), slog.String("resource", f.Resource),
		slog.String("client_id", f.ClientID), slog.Time("expires", f.Expires), slog.Any("caller", f.Caller))
}

// BeginOptions are the caller's part of a flow.
type BeginOptions struct {
	// RedirectURL is where the authorization server sends the person back
	// (one of the client's registered redirect URIs). Required.
	RedirectURL string
	// Scopes replace the discovered scopes when not nil (a step-up passes
	// the union of the granted and the challenged scopes).
	Scopes []string
	// TTL is how long the flow may be finished; zero is DefaultFlowTTL.
	TTL time.Duration
	// Caller is copied into Flow.Caller.
	Caller map[string]string
}

// Begin starts an authorization code flow with client c at d's server: a
// Flow to store, and the authorization URL to send the person to, carrying
// response_type=code, client_id, redirect_uri, scope (omitted when there
// are none; offline_access is added where the server lists it, for a
// refresh token), state, code_challenge with S256 and resource.
func Begin(d Discovery, c Client, o BeginOptions) (Flow, string, error) {
	as := d.AuthServer
	if c.ID == "" {
		return Flow{}, "", errors.New("oauth: begin: the client has no id")
	}
	if !sameIssuer(c.Issuer, as.Issuer) {
		return Flow{}, "", fmt.Errorf("%w: the client belongs to %s, the resource's server is %s", ErrIssuer, c.Issuer, as.Issuer)
	}
	if o.RedirectURL == "" {
		return Flow{}, "", errors.New("oauth: begin: no redirect URL")
	}
	if d.Resource == "" || as.AuthorizationEndpoint == "" || as.TokenEndpoint == "" {
		return Flow{}, "", errors.New("oauth: begin: the discovery has no resource or endpoints")
	}
	scopes := d.Scopes
	if o.Scopes != nil {
		scopes = o.Scopes
	}
	scopes = slices.Clone(scopes)
	if slices.Contains(as.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	ttl := o.TTL
	if ttl <= 0 {
		ttl = DefaultFlowTTL
	}
	now := time.Now()
	f := Flow{
		State:                 rand.Text(),
		Verifier:              oauth2.GenerateVerifier(),
		Resource:              d.Resource,
		Issuer:                as.Issuer,
		IssParameterSupported: as.AuthorizationResponseIssParameterSupported,
		AuthURL:               as.AuthorizationEndpoint,
		TokenURL:              as.TokenEndpoint,
		ClientID:              c.ID,
		Scopes:                scopes,
		RedirectURL:           o.RedirectURL,
		Created:               now,
		Expires:               now.Add(ttl),
		Caller:                maps.Clone(o.Caller),
	}
	cfg := oauth2.Config{ClientID: c.ID, Endpoint: oauth2.Endpoint{AuthURL: f.AuthURL}, RedirectURL: f.RedirectURL, Scopes: f.Scopes}
	authURL := cfg.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oauth2.SetAuthURLParam("resource", f.Resource))
	return f, authURL, nil
}

// StateOf is the state of an authorization redirect's query, by which the
// caller finds (and takes) its Flow.
func StateOf(callbackQuery url.Values) string { return callbackQuery.Get("state") }

// Finish completes flow f with the redirect's query: it refuses a state
// that is not f's (ErrState), an expired flow (ErrExpired), an error
// response (ErrDenied, a *ServerError with the server's code), and an iss
// that is missing where the server advertises RFC 9207 or names another
// server (ErrIssuer). Then it exchanges the code at the token endpoint
// with the PKCE verifier and the resource, authenticating as c (the
// client f was begun with). A code used before fails with ErrInvalidGrant.
//
// The caller has already removed f from its store, so a replay finds no
// flow; after an error the person starts a new flow.
func Finish(ctx context.Context, client *http.Client, c Client, f Flow, callbackQuery url.Values) (Token, error) {
	q := callbackQuery
	state := q.Get("state")
	if f.State == "" || state == "" || subtle.ConstantTimeCompare([]byte(state), []byte(f.State)) != 1 {
		return Token{}, ErrState
	}
	if !time.Now().Before(f.Expires) {
		return Token{}, fmt.Errorf("%w (at %s)", ErrExpired, f.Expires.Format(time.RFC3339))
	}
	iss := q.Get("iss")
	switch {
	case iss == "" && f.IssParameterSupported:
		return Token{}, fmt.Errorf("%w: %s advertises the iss parameter (RFC 9207) but the redirect has none", ErrIssuer, f.Issuer)
	case iss != "" && iss != f.Issuer:
		return Token{}, fmt.Errorf("%w: the redirect comes from %q, the flow is with %q", ErrIssuer, iss, f.Issuer)
	}
	if code := q.Get("error"); code != "" {
		return Token{}, &ServerError{Op: "authorization", Code: code, Description: q.Get("error_description")}
	}
	code := q.Get("code")
	if code == "" {
		return Token{}, errors.New("oauth: the redirect has neither a code nor an error")
	}
	if c.ID != f.ClientID || !sameIssuer(c.Issuer, f.Issuer) {
		return Token{}, fmt.Errorf("oauth: finish: the flow was begun for client %q at %s, not %q at %s", f.ClientID, f.Issuer, c.ID, c.Issuer)
	}
	cfg := oauth2.Config{
		ClientID:     c.ID,
		ClientSecret: secretOf(c),
		Endpoint:     oauth2.Endpoint{AuthURL: f.AuthURL, TokenURL: f.TokenURL, AuthStyle: authStyle(c.AuthMethod)},
		RedirectURL:  f.RedirectURL,
		Scopes:       f.Scopes,
	}
	opts, err := exchangeOptions(c, f)
	if err != nil {
		return Token{}, err
	}
	t, err := cfg.Exchange(withClient(ctx, client), code, opts...)
	if err != nil {
		return Token{}, tokenError("token exchange", f.TokenURL, err)
	}
	return fromOAuth2(t, f.Scopes, f.Resource, f.Issuer, c.ID), nil
}

// exchangeOptions are the code exchange's parameters beyond the code:
// the PKCE verifier, the resource, and c's assertion when it
// authenticates with private_key_jwt.
func exchangeOptions(c Client, f Flow) ([]oauth2.AuthCodeOption, error) {
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(f.Verifier), oauth2.SetAuthURLParam("resource", f.Resource)}
	auth := url.Values{}
	if err := assert(c, auth); err != nil {
		return nil, err
	}
	for k := range auth {
		opts = append(opts, oauth2.SetAuthURLParam(k, auth.Get(k)))
	}
	return opts, nil
}

// withClient makes x/oauth2 use client.
func withClient(ctx context.Context, client *http.Client) context.Context {
	if client == nil {
		return ctx
	}
	return context.WithValue(ctx, oauth2.HTTPClient, client)
}

// authStyle is x/oauth2's style for a token endpoint auth method; "none"
// and private_key_jwt send the client id in the form and no secret.
func authStyle(method string) oauth2.AuthStyle {
	switch method {
	case AuthClientSecretBasic:
		return oauth2.AuthStyleInHeader
	default:
		return oauth2.AuthStyleInParams
	}
}
