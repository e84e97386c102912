package oauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Discovery is what the client learned about a protected MCP server and
// its authorization server. It is a plain value: marshal it and cache it
// per server.
type Discovery struct {
	// Resource is the resource identifier (RFC 8707) that every
	// authorization and token request names: the protected resource
	// metadata's resource, which is the MCP server's URL (or its origin,
	// when the metadata was found at the root).
	Resource string `json:"resource"`
	// ResourceMetadataURL is where the protected resource metadata came
	// from; empty when the server had none (the 2025-03-26 fallback).
	ResourceMetadataURL string `json:"resource_metadata_url,omitempty"`
	// AuthServer is the authorization server's metadata (RFC 8414 or
	// OpenID Connect discovery). Its Issuer is the server's identity.
	AuthServer oauthex.AuthServerMeta `json:"authorization_server"`
	// Scopes are the scopes to ask for: the WWW-Authenticate challenge's
	// scope, else the resource's scopes_supported, else none.
	Scopes []string `json:"scopes,omitempty"`
}

// Discover finds the authorization server of the MCP server at resourceURL.
// wwwAuthenticate holds the WWW-Authenticate values of the server's 401
// (or 403), if there was one: their resource_metadata is tried first, then
// the well-known URIs at the server's path and at its root (RFC 9728). The
// authorization server metadata comes from the RFC 8414 and OpenID Connect
// well-known URIs; a server without any gets the 2025-03-26 default
// endpoints. The server must offer PKCE with S256.
//
// client makes the requests; nil means http.DefaultClient. The go-sdk's
// discovery refuses non-HTTPS URLs other than loopback ones, and redirects
// and addresses into private networks.
func Discover(ctx context.Context, client *http.Client, resourceURL string, wwwAuthenticate []string) (Discovery, error) {
	if client == nil {
		client = http.DefaultClient
	}
	ru, err := url.Parse(resourceURL)
	if err != nil || ru.Scheme == "" || ru.Host == "" {
		return Discovery{}, fmt.Errorf("oauth: discovery: %q is not an absolute URL", resourceURL)
	}
	challenges, err := oauthex.ParseWWWAuthenticate(wwwAuthenticate)
	if err != nil {
		return Discovery{}, fmt.Errorf("oauth: discovery for %s: WWW-Authenticate: %w", resourceURL, err)
	}

	var d Discovery
	prm, metaURL, err := resourceMetadata(ctx, client, ru, resourceURL, challengeParam(challenges, "resource_metadata"))
	if err != nil {
		return Discovery{}, err
	}
	d.Resource, d.ResourceMetadataURL = prm.Resource, metaURL
	asm, err := authServerMetadata(ctx, client, prm.AuthorizationServers[0], metaURL == "")
	if err != nil {
		return Discovery{}, err
	}
	d.AuthServer = *asm
	d.Scopes = strings.Fields(challengeParam(challenges, "scope"))
	if len(d.Scopes) == 0 {
		d.Scopes = slices.Clone(prm.ScopesSupported)
	}
	return d, nil
}

// resourceMetadata finds the protected resource metadata of resourceURL
// (ru parsed) and where it was found: at the challenge's URL or the
// well-known URIs, else, as the 2025-03-26 specification has it, the MCP
// server's origin as its authorization server (and no URL).
func resourceMetadata(ctx context.Context, client *http.Client, ru *url.URL, resourceURL, fromHeader string) (*oauthex.ProtectedResourceMetadata, string, error) {
	for _, c := range resourceMetadataURLs(fromHeader, resourceURL) {
		m, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, client)
		if err != nil {
			continue // not there, or refused: the next place
		}
		if len(m.AuthorizationServers) == 0 {
			return nil, "", fmt.Errorf("oauth: discovery: the protected resource metadata at %s names no authorization server", c.url)
		}
		return m, c.url, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, "", fmt.Errorf("oauth: discovery for %s: %w", resourceURL, err)
	}
	origin := *ru
	origin.Path, origin.RawPath, origin.RawQuery, origin.Fragment = "", "", "", ""
	return &oauthex.ProtectedResourceMetadata{Resource: resourceURL, AuthorizationServers: []string{origin.String()}}, "", nil
}

// authServerMetadata reads the authorization server metadata of issuer
// (RFC 8414, the OpenID Connect fallback; for a legacy server, one found
// with no resource metadata, the metadata at its origin whatever issuer it
// names, else the 2025-03-26 default endpoints), and checks it offers PKCE
// with S256 and names its endpoints.
func authServerMetadata(ctx context.Context, client *http.Client, issuer string, legacy bool) (*oauthex.AuthServerMeta, error) {
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil && legacy {
		asm, err = legacyAuthServerMetadata(ctx, client, issuer)
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: discovery: authorization server metadata of %s: %w", issuer, err)
	}
	if asm == nil {
		base := strings.TrimSuffix(issuer, "/")
		asm = &oauthex.AuthServerMeta{
			Issuer:                        issuer,
			AuthorizationEndpoint:         base + "/authorize",
			TokenEndpoint:                 base + "/token",
			RegistrationEndpoint:          base + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
		}
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, fmt.Errorf("oauth: discovery: authorization server %s does not offer PKCE with S256", asm.Issuer)
	}
	if asm.AuthorizationEndpoint == "" || asm.TokenEndpoint == "" {
		return nil, fmt.Errorf("oauth: discovery: authorization server %s names no authorization or token endpoint", asm.Issuer)
	}
	return asm, nil
}

// challengeParam is a Bearer challenge's parameter (resource_metadata is
// taken from any challenge, as the go-sdk does).
func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if v := c.Params[name]; v != "" && (c.Scheme == "bearer" || name == "resource_metadata") {
			return v
		}
	}
	return ""
}

type metadataURL struct{ url, resource string }

// resourceMetadataURLs are the places to look for the protected resource
// metadata, in the specification's order, each with the resource it must
// name.
func resourceMetadataURLs(fromHeader, resourceURL string) []metadataURL {
	var out []metadataURL
	if fromHeader != "" {
		out = append(out, metadataURL{fromHeader, resourceURL})
	}
	ru, err := url.Parse(resourceURL)
	if err != nil {
		return out
	}
	at := *ru
	at.RawQuery, at.Fragment, at.RawPath = "", "", ""
	if p := strings.TrimLeft(ru.Path, "/"); p != "" {
		at.Path = "/.well-known/oauth-protected-resource/" + p
		out = append(out, metadataURL{at.String(), resourceURL})
	}
	at.Path = "/.well-known/oauth-protected-resource"
	root := *ru
	root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
	out = append(out, metadataURL{at.String(), root.String()})
	return out
}

// legacyAuthServerMetadata reads the RFC 8414 metadata at origin's
// well-known URI without the issuer check, for a 2025-03-26 server (no
// protected resource metadata), whose origin is its authorization server.
// Its endpoints must be absolute http(s) URLs.
func legacyAuthServerMetadata(ctx context.Context, client *http.Client, origin string) (*oauthex.AuthServerMeta, error) {
	u := strings.TrimSuffix(origin, "/") + "/.well-known/oauth-authorization-server"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("oauth: discovery: %q is not a URL", origin)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("oauth: discovery: %s answered %s", u, resp.Status)
	}
	var m oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("oauth: discovery: %s is not JSON metadata", u)
	}
	for _, e := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint, m.RevocationEndpoint} {
		if e == "" {
			continue
		}
		if eu, err := url.Parse(e); err != nil || (eu.Scheme != "https" && eu.Scheme != "http") || eu.Host == "" {
			return nil, fmt.Errorf("oauth: discovery: %s names an endpoint that is not an http(s) URL", u)
		}
	}
	return &m, nil
}
