package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ExpiryLeeway is how long before its expiry a token counts as expired
// (Token.Expired), so that it is refreshed before a request can fail.
const ExpiryLeeway = 30 * time.Second

// Token is an access token for one resource, with what refreshing and
// revoking it needs. It is a secret: the caller stores it encrypted, and
// it prints and logs redacted.
type Token struct {
	// AccessToken is the bearer token.
	AccessToken string `json:"access_token"`
	// TokenType is the token type, normally "Bearer".
	TokenType string `json:"token_type,omitempty"`
	// RefreshToken refreshes the access token; empty when none was issued.
	RefreshToken string `json:"refresh_token,omitempty"`
	// Expiry is when the access token expires; zero when unknown.
	Expiry time.Time `json:"expiry,omitzero"`
	// Scopes are the granted scopes (the requested ones when the server
	// did not say).
	Scopes []string `json:"scopes,omitempty"`
	// Resource is the resource (RFC 8707) the token was issued for: it is
	// sent to nothing else (Covers).
	Resource string `json:"resource"`
	// Issuer is the authorization server that issued it.
	Issuer string `json:"issuer"`
	// ClientID is the client it was issued to.
	ClientID string `json:"client_id"`
}

// String shows the token without the access and refresh tokens.
func (t Token) String() string {
	exp := "unknown"
	if !t.Expiry.IsZero() {
		exp = t.Expiry.Format(time.RFC3339)
	}
	return fmt.Sprintf("oauth.Token{Resource:%q Issuer:%q ClientID:%q Scopes:%q Expiry:%s AccessToken:%s RefreshToken:%s}",
		t.Resource, t.Issuer, t.ClientID, t.Scopes, exp, redacted(t.AccessToken), redacted(t.RefreshToken))
}

// GoString is String.
func (t Token) GoString() string { return t.String() }

// LogValue logs the token without the access and refresh tokens.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("resource", t.Resource), slog.String("issuer", t.Issuer),
		slog.String("client_id", t.ClientID), slog.Any("scopes", t.Scopes), slog.Time("expiry", t.Expiry),
		slog.Bool("refreshable", t.RefreshToken != ""))
}

// Expired reports whether the access token is missing, or expires within
// ExpiryLeeway of now.
func (t Token) Expired(now time.Time) bool {
	return t.AccessToken == "" || !t.Expiry.IsZero() && !now.Add(ExpiryLeeway).Before(t.Expiry)
}

// fromOAuth2 converts an x/oauth2 token; the scope defaults to the
// requested one (RFC 6749 section 5.1).
func fromOAuth2(t *oauth2.Token, requested []string, resource, issuer, clientID string) Token {
	scopes := slices.Clone(requested)
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		scopes = strings.Fields(s)
	}
	return Token{
		AccessToken:  t.AccessToken,
		TokenType:    t.TokenType,
		RefreshToken: t.RefreshToken,
		Expiry:       t.Expiry,
		Scopes:       scopes,
		Resource:     resource,
		Issuer:       issuer,
		ClientID:     clientID,
	}
}

// Refresh exchanges t's refresh token for a new token at c's token
// endpoint, naming t's resource. A server that issues no new refresh token
// leaves t's in place. A refresh token that is no longer accepted
// (revoked, expired) fails with ErrInvalidGrant: the person connects again.
func Refresh(ctx context.Context, client *http.Client, c Client, t Token) (Token, error) {
	if t.RefreshToken == "" {
		return Token{}, ErrNoRefreshToken
	}
	if err := sameClient(c, t); err != nil {
		return Token{}, err
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {t.RefreshToken}}
	if t.Resource != "" {
		form.Set("resource", t.Resource)
	}
	var r tokenResponse
	if err := post(ctx, client, c, "refresh", c.TokenURL, form, &r); err != nil {
		return Token{}, err
	}
	if r.AccessToken == "" {
		return Token{}, fmt.Errorf("oauth: refresh at %s: the response has no access token", c.TokenURL)
	}
	n := t
	n.AccessToken, n.TokenType, n.Expiry = r.AccessToken, r.TokenType, time.Time{}
	if secs, err := r.ExpiresIn.Int64(); err == nil && secs > 0 {
		n.Expiry = time.Now().Add(time.Duration(secs) * time.Second)
	}
	if r.RefreshToken != "" {
		n.RefreshToken = r.RefreshToken
	}
	if r.Scope != "" {
		n.Scopes = strings.Fields(r.Scope)
	}
	return n, nil
}

// Revoke revokes t at c's revocation endpoint (RFC 7009): its refresh
// token first, which ends the grant (and with it, at most servers, the
// access tokens), then its access token. A server that cannot revoke an
// access token (unsupported_token_type, as for self-contained JWTs) is
// fine once the refresh token is revoked: the access token only lives to
// its expiry. A server without a revocation endpoint gives
// ErrNoRevocation. Either way the caller forgets the token.
func Revoke(ctx context.Context, client *http.Client, c Client, t Token) error {
	if c.RevocationURL == "" {
		return fmt.Errorf("%w (%s)", ErrNoRevocation, c.Issuer)
	}
	if err := sameClient(c, t); err != nil {
		return err
	}
	if t.RefreshToken != "" {
		form := url.Values{"token": {t.RefreshToken}, "token_type_hint": {"refresh_token"}}
		if err := post(ctx, client, c, "revocation", c.RevocationURL, form, nil); err != nil {
			return err
		}
	}
	if t.AccessToken == "" {
		return nil
	}
	form := url.Values{"token": {t.AccessToken}, "token_type_hint": {"access_token"}}
	err := post(ctx, client, c, "revocation", c.RevocationURL, form, nil)
	var se *ServerError
	if t.RefreshToken != "" && errors.As(err, &se) && se.Code == "unsupported_token_type" {
		return nil
	}
	return err
}

// ClientCredentials obtains a token for a service identity with the
// client credentials grant (the MCP client-credentials extension; the
// go-sdk's extauth.ClientCredentialsHandler does the same, but keeps the
// token in memory, names no resource and knows no private_key_jwt). It
// asks d's token endpoint for d's scopes and d's resource, authenticating
// with the pre-registered confidential credentials cr: a signed assertion
// (private_key_jwt) when they hold a key, else the secret. The token has
// no refresh token: get a new one when it expires.
func ClientCredentials(ctx context.Context, client *http.Client, d Discovery, cr Credentials) (Token, error) {
	as := d.AuthServer
	if !cr.Confidential() {
		return Token{}, errors.New("oauth: client credentials need a client id, and a secret or a private key")
	}
	if cr.Issuer != "" && !sameIssuer(cr.Issuer, as.Issuer) {
		return Token{}, fmt.Errorf("%w: the credentials are for %s, the server is %s", ErrIssuer, cr.Issuer, as.Issuer)
	}
	c := Client{ID: cr.ClientID, Secret: cr.ClientSecret, Key: cr.ClientKey, Issuer: as.Issuer, TokenURL: as.TokenEndpoint,
		AuthMethod: cr.authMethod(as.TokenEndpointAuthMethodsSupported)}
	params := url.Values{"resource": {d.Resource}}
	if err := assert(c, params); err != nil {
		return Token{}, err
	}
	cfg := clientcredentials.Config{
		ClientID:       c.ID,
		ClientSecret:   secretOf(c),
		TokenURL:       c.TokenURL,
		Scopes:         d.Scopes,
		EndpointParams: params,
		AuthStyle:      authStyle(c.AuthMethod),
	}
	t, err := cfg.Token(withClient(ctx, client))
	if err != nil {
		return Token{}, tokenError("client credentials", as.TokenEndpoint, err)
	}
	return fromOAuth2(t, d.Scopes, d.Resource, as.Issuer, cr.ClientID), nil
}

// assert adds to form, for a client that authenticates with
// private_key_jwt, a new assertion signed with its key for its
// authorization server; other clients are left as they are.
func assert(c Client, form url.Values) error {
	if c.AuthMethod != AuthPrivateKeyJWT {
		return nil
	}
	if c.Key == nil {
		return fmt.Errorf("oauth: client %q authenticates with private_key_jwt, and its private key is not configured", c.ID)
	}
	a, err := c.Key.Assertion(c.ID, c.audience(), time.Now())
	if err != nil {
		return err
	}
	form.Set("client_assertion_type", ClientAssertionType)
	form.Set("client_assertion", a)
	return nil
}

// secretOf is the secret x/oauth2 sends for c: none unless c
// authenticates with its secret.
func secretOf(c Client) string {
	if c.AuthMethod == AuthClientSecretBasic || c.AuthMethod == AuthClientSecretPost {
		return c.Secret
	}
	return ""
}

// sameClient checks that t was issued to c.
func sameClient(c Client, t Token) error {
	if t.ClientID != "" && t.ClientID != c.ID || t.Issuer != "" && !sameIssuer(t.Issuer, c.Issuer) {
		return fmt.Errorf("%w: the token was issued to client %q by %s, not to %q by %s", ErrIssuer, t.ClientID, t.Issuer, c.ID, c.Issuer)
	}
	return nil
}

// tokenResponse is a token endpoint's answer (RFC 6749 section 5).
type tokenResponse struct {
	AccessToken  string      `json:"access_token"`
	TokenType    string      `json:"token_type"`
	RefreshToken string      `json:"refresh_token"`
	ExpiresIn    json.Number `json:"expires_in"` // some servers send a string
	Scope        string      `json:"scope"`
}

// maxResponse bounds what is read of a token or revocation response.
const maxResponse = 1 << 20

// post sends form to endpoint, authenticated as c, and decodes a 200's
// JSON into out (when not nil). An error answer becomes a *ServerError.
func post(ctx context.Context, client *http.Client, c Client, op, endpoint string, form url.Values, out any) error {
	if endpoint == "" {
		return fmt.Errorf("oauth: %s: no endpoint", op)
	}
	if client == nil {
		client = http.DefaultClient
	}
	switch c.AuthMethod {
	case AuthClientSecretBasic:
	case AuthClientSecretPost:
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	default:
		form.Set("client_id", c.ID)
	}
	if err := assert(c, form); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("oauth: %s: %w", op, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthMethod == AuthClientSecretBasic {
		// RFC 6749 section 2.3.1: both are form-encoded first.
		req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("oauth: %s: %w", op, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("oauth: %s at %s: reading the response: %w", op, endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		se := &ServerError{Op: op, Endpoint: endpoint, Status: resp.StatusCode}
		var e struct {
			Error            string `json:"error"`
			ErrorDescription string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			se.Code, se.Description = e.Error, e.ErrorDescription
		}
		return se
	}
	if out == nil {
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return fmt.Errorf("oauth: %s at %s: the response is %q, not JSON", op, endpoint, mt)
	}
	if err := json.Unmarshal(body, out); err != nil {
		// encoding/json's messages name offsets and types, not content.
		return fmt.Errorf("oauth: %s at %s: the response is not a token response: %w", op, endpoint, err)
	}
	return nil
}
