// Package connecttest is a stand-in OAuth authorization server with a
// protected MCP resource, for the tests of MCP authorization (package
// connect, and the wiring in cmd/agentbot).
package connecttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

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
// credentials to ServiceClientID, authenticated with ServiceClientSecret
// or with an ES256 assertion (private_key_jwt) signed by ServiceKeyPEM; a
// token request of any grant that carries an assertion must carry a good
// one, used once. Protect serves an MCP server at
// Resource, behind the access tokens it issued.
type Provider struct {
	*httptest.Server
	// Resource is the protected MCP resource's URL.
	Resource string
	// ServiceKeyPEM is the private key (PKCS #8 PEM, P-256) registered for
	// ServiceClientID, generated for this provider.
	ServiceKeyPEM []byte

	cimd    bool
	mu      sync.Mutex
	n       int
	codes   map[string]codeGrant
	refresh map[string]bool // live refresh tokens
	access  map[string]bool // live access tokens
	forms   []url.Values
	regs    int
	key     *ecdsa.PublicKey
	jtis    map[string]bool // assertions seen
	mcp     http.Handler
}

type codeGrant struct{ challenge, redirect string }

// New starts a Provider, closed when t ends; cimd says whether it
// supports client ID metadata documents.
func New(t testing.TB, cimd bool) *Provider {
	p := &Provider{cimd: cimd, codes: map[string]codeGrant{}, refresh: map[string]bool{}, jtis: map[string]bool{}, access: map[string]bool{}}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p.key, p.ServiceKeyPEM = &key.PublicKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
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
			TokenEndpointAuthMethodsSupported:          []string{"client_secret_basic", "client_secret_post", "private_key_jwt"},
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
	if f.Has("client_assertion") && !p.assertion(f) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":"invalid_client"}`)
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
		if !p.serviceClient(r, f) {
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

// serviceClient reports whether a client credentials request
// authenticates as ServiceClientID: with its secret (Basic or in the
// form), or with an assertion (checked by assertion before).
func (p *Provider) serviceClient(r *http.Request, f url.Values) bool {
	if f.Has("client_assertion") {
		return true // checked already
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	return id == ServiceClientID && secret == ServiceClientSecret
}

// assertion reports whether a token request's client assertion
// (private_key_jwt) is ServiceClientID's, signed by its key for this
// issuer, not expired and not seen before. The lock is held.
func (p *Provider) assertion(f url.Values) bool {
	jti, ok := p.verify(f.Get("client_assertion"))
	if !ok || f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" || p.jtis[jti] {
		return false
	}
	p.jtis[jti] = true
	return true
}

// verify checks an ES256 client assertion of ServiceClientID for this
// issuer and returns its jti.
func (p *Provider) verify(assertion string) (string, bool) {
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return "", false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err != nil || len(sig) != 64 ||
		!ecdsa.Verify(p.key, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "", false
	}
	var h struct{ Alg string }
	var c struct {
		Iss, Sub, Aud, Jti string
		Exp                int64
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	if err1 != nil || err2 != nil || json.Unmarshal(hb, &h) != nil || json.Unmarshal(cb, &c) != nil {
		return "", false
	}
	ok := h.Alg == "ES256" && c.Iss == ServiceClientID && c.Sub == ServiceClientID && c.Aud == p.URL &&
		c.Jti != "" && time.Now().Unix() < c.Exp
	return c.Jti, ok
}

// RevokeAll makes every refresh token invalid (the person revoked the
// grant at the server).

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

// Assertions counts the client assertions (private_key_jwt) accepted.
func (p *Provider) Assertions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.jtis)
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
