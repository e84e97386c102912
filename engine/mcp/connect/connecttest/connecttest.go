// Package connecttest is a stand-in OAuth authorization server with a
// protected MCP resource, for the tests of MCP authorization (package
// connect, and the wiring in cmd/agentbot).
package connecttest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The confidential client the provider grants client credentials to.
const (
	ServiceClientID     = "svc-client"
	ServiceClientSecret = "svc-secret-value"
	// DynamicClientSecret is the secret of the client the registration
	// endpoint registers.
	DynamicClientSecret = "dyn-secret-value"
)

// Provider is a stub authorization server with a protected resource at
// Resource: its authorization endpoint approves at once (redirecting with
// a code and iss), its token endpoint checks PKCE, the redirect URI and
// the resource, issues rotating refresh tokens, and offers client
// credentials to ServiceClientID. Protect serves an MCP server at
// Resource, behind the access tokens it issued.
type Provider struct {
	*httptest.Server
	// Resource is the protected MCP resource's URL.
	Resource string

	cimd    bool
	mu      sync.Mutex
	n       int
	codes   map[string]codeGrant
	refresh map[string]bool // live refresh tokens
	access  map[string]bool // live access tokens
	forms   []url.Values
	regs    int
	mcp     http.Handler
}

type codeGrant struct{ challenge, redirect string }

// New starts a Provider, closed when t ends; cimd says whether it
// supports client ID metadata documents.
func New(t testing.TB, cimd bool) *Provider {
	p := &Provider{cimd: cimd, codes: map[string]codeGrant{}, refresh: map[string]bool{}, access: map[string]bool{}}
	mux := http.NewServeMux()
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	p.Resource = p.URL + "/mcp"
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(oauthex.ProtectedResourceMetadata{Resource: p.Resource,
			AuthorizationServers: []string{p.URL}, ScopesSupported: []string{"read"}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(oauthex.AuthServerMeta{
			Issuer:                                     p.URL,
			AuthorizationEndpoint:                      p.URL + "/authorize",
			TokenEndpoint:                              p.URL + "/token",
			RegistrationEndpoint:                       p.URL + "/register",
			CodeChallengeMethodsSupported:              []string{"S256"},
			ResponseTypesSupported:                     []string{"code"},
			GrantTypesSupported:                        []string{"authorization_code", "refresh_token", "client_credentials"},
			ScopesSupported:                            []string{"read", "offline_access"},
			ClientIDMetadataDocumentSupported:          p.cimd,
			AuthorizationResponseIssParameterSupported: true,
		})
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.regs++
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"client_id":"dyn-1","client_secret":%q,"token_endpoint_auth_method":"client_secret_basic"}`, DynamicClientSecret)
	})
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("/mcp", p.resource)
	return p
}

// Protect serves h (an MCP server) at Resource: a request without a
// bearer access token the provider issued, and has not revoked, is
// answered 401 with a challenge naming the resource's metadata.
func (p *Provider) Protect(h http.Handler) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mcp = h
}

func (p *Provider) resource(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	h := p.mcp
	ok := p.access[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	p.mu.Unlock()
	switch {
	case h == nil:
		http.NotFound(w, r)
	case !ok:
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+p.URL+`/.well-known/oauth-protected-resource/mcp"`)
		http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
	default:
		h.ServeHTTP(w, r)
	}
}

func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != p.Resource {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.n++
	code := fmt.Sprintf("code-%d", p.n)
	p.codes[code] = codeGrant{q.Get("code_challenge"), q.Get("redirect_uri")}
	p.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect", http.StatusBadRequest)
		return
	}
	back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {p.URL}}.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f := r.PostForm
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forms = append(p.forms, f)
	w.Header().Set("Content-Type", "application/json")
	fail := func(code string) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":%q}`, code)
	}
	if f.Get("resource") != p.Resource {
		fail("invalid_target")
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := p.codes[f.Get("code")]
		delete(p.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || f.Get("redirect_uri") != g.redirect {
			fail("invalid_grant")
			return
		}
	case "refresh_token":
		if !p.refresh[f.Get("refresh_token")] {
			fail("invalid_grant")
			return
		}
		delete(p.refresh, f.Get("refresh_token")) // rotated
	case "client_credentials":
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = f.Get("client_id"), f.Get("client_secret")
		}
		if id != ServiceClientID || secret != ServiceClientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		p.n++
		p.access[fmt.Sprintf("svc-access-%d", p.n)] = true
		fmt.Fprintf(w, `{"access_token":"svc-access-%d","token_type":"Bearer","expires_in":3600}`, p.n)
		return
	default:
		fail("unsupported_grant_type")
		return
	}
	p.n++
	rt := fmt.Sprintf("refresh-%d", p.n)
	p.refresh[rt] = true
	p.access[fmt.Sprintf("access-%d", p.n)] = true
	fmt.Fprintf(w, `{"access_token":"access-%d","token_type":"Bearer","refresh_token":%q,"expires_in":3600,"scope":"read offline_access"}`, p.n, rt)
}

// RevokeAll makes every refresh and access token invalid (the person
// revoked the grant at the server).
func (p *Provider) RevokeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.refresh)
	clear(p.access)
}

// GrantTypes are the grant types of the token requests so far, in order.
func (p *Provider) GrantTypes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, f := range p.forms {
		out = append(out, f.Get("grant_type"))
	}
	return out
}

// Registrations counts the dynamic client registrations.
func (p *Provider) Registrations() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.regs
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Authorize opens authURL as the person's browser would, and returns the
// redirect back to agentbot (not followed).
func Authorize(t testing.TB, authURL string) *url.URL {
	t.Helper()
	resp, err := noRedirects.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization endpoint: %s", resp.Status)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return back
}
