package oauth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"agentbot/engine/fixtures"
)

// These tests run a real authorization server: oidc-provider from npm (a
// certified OpenID provider), pinned in testdata/npm and configured by
// testdata/provider.mjs. .ci/run installs it; without node or the package
// the tests skip, and under CI=true they fail.

// NodeModulesEnv names the node_modules folder holding oidc-provider,
// installed from testdata/npm with npm ci; without it, that folder in the
// source tree is used.
const NodeModulesEnv = "AGENTBOT_OAUTH_NODE_MODULES"

// redirectURL is the redirect URI of the test clients; nothing listens
// there: the test stops at the redirect and reads its query.
const redirectURL = "http://127.0.0.1:9/oauth/callback"

// lockedBuffer collects the server's output for a failing test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProvider runs oidc-provider on a free loopback port with resource
// as its only resource (env adds to its environment: CLIENT_JWKS), waits
// for its discovery document, and stops it when the test ends. It returns
// the issuer.
func startProvider(t *testing.T, resource string, env ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	testdata := filepath.Join(filepath.Dir(file), "testdata")
	modules := os.Getenv(NodeModulesEnv)
	if modules == "" {
		modules = filepath.Join(testdata, "npm", "node_modules")
	}
	node, err := exec.LookPath("node")
	missing := ""
	if err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(modules, "oidc-provider", "package.json")); err != nil {
		missing = fmt.Sprintf("oidc-provider is not installed (cd engine/mcp/oauth/testdata/npm && npm ci, or set %s)", NodeModulesEnv)
	}
	if missing != "" {
		fixtures.Unavailable(t, fixtures.NeedOAuthServer, "authorization server: "+missing)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	issuer := "http://127.0.0.1:" + strconv.Itoa(port)

	out := &lockedBuffer{}
	cmd := exec.Command(node, filepath.Join(testdata, "provider.mjs"))
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port), "RESOURCE="+resource, "NODE_MODULES="+modules, "REDIRECT_URI="+redirectURL)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("oidc-provider output:\n%s", out.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second) // a bound on startup, not a measurement
	for {
		resp, err := http.Get(issuer + "/.well-known/openid-configuration")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return issuer
			}
		}
		select {
		case <-exited:
			t.Fatalf("oidc-provider exited:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("oidc-provider did not answer on %s: %v\n%s", issuer, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// resourceServer is a tiny protected MCP resource: /mcp and below answer
// 200 to a JWT access token whose audience is the resource and whose
// scopes include what the path needs ("/mcp/write" needs mcp:write, the
// rest mcp:read); otherwise 401 with resource_metadata and scope, or 403
// insufficient_scope. /mcp/away redirects to another origin.
type resourceServer struct {
	*httptest.Server
	Resource string
	issuer   string
	away     string
}

func newResourceServer(t *testing.T) *resourceServer {
	rs := &resourceServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.Close)
	rs.Resource = rs.URL + "/mcp"
	return rs
}

func (rs *resourceServer) metadataURL() string {
	return rs.URL + "/.well-known/oauth-protected-resource/mcp"
}

func (rs *resourceServer) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/.well-known/oauth-protected-resource/mcp":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(oauthex.ProtectedResourceMetadata{Resource: rs.Resource,
			AuthorizationServers: []string{rs.issuer}, ScopesSupported: []string{"mcp:read", "mcp:write"}})
		return
	case r.URL.Path == "/mcp/away":
		http.Redirect(w, r, rs.away, http.StatusFound)
		return
	}
	need := "mcp:read"
	if r.URL.Path == "/mcp/write" {
		need = "mcp:write"
	}
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	claims, err := jwtClaims(raw)
	if !ok || err != nil || claims.Issuer != rs.issuer || !slices.Contains(claims.Audience, rs.Resource) || time.Unix(claims.Expiry, 0).Before(time.Now()) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope="mcp:read"`, rs.metadataURL()))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if !slices.Contains(strings.Fields(claims.Scope), need) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, need, rs.metadataURL()))
		w.WriteHeader(http.StatusForbidden)
		return
	}
	io.WriteString(w, "ok "+claims.Subject)
}

type claims struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience audience `json:"aud"`
	Expiry   int64    `json:"exp"`
	Scope    string   `json:"scope"`
	ClientID string   `json:"client_id"`
}

// audience is a JWT aud: one string or a list.
type audience []string

func (a *audience) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*a = audience{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(a))
}

// jwtClaims reads a JWT's claims (the test server trusts the signature:
// it checks what the client is responsible for, the audience).
func jwtClaims(raw string) (claims, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return claims{}, errors.New("not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return claims{}, err
	}
	var c claims
	return c, json.Unmarshal(b, &c)
}

// follow opens the authorization URL the way a browser would (a cookie
// jar, redirects followed; the test server logs in and consents by
// itself) and returns the query of the redirect to redirectURL.
func follow(t *testing.T, authURL string) url.Values {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirectURL) {
			return http.ErrUseLastResponse
		}
		if len(via) > 10 {
			return errors.New("too many redirects")
		}
		return nil
	}}
	resp, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	loc, err := resp.Location()
	if err != nil || !strings.HasPrefix(loc.String(), redirectURL) {
		t.Fatalf("the authorization ended at %s with %d, not at the redirect: %.500s", resp.Request.URL, resp.StatusCode, body)
	}
	return loc.Query()
}

// noSecrets fails the test when err's text holds any of secrets.
func noSecrets(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q holds a secret", err)
		}
	}
}

// roundTrip marshals v and back, as a store (and another replica) would.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// publicJWK is the JWK (RFC 7517) of a public key the tests sign with,
// for the provider's client registrations.
func publicJWK(t *testing.T, pub crypto.PublicKey, kid string) map[string]string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		b, err := k.Bytes() // 0x04 || x || y
		if err != nil {
			t.Fatal(err)
		}
		n := (len(b) - 1) / 2
		return map[string]string{"kty": "EC", "crv": k.Curve.Params().Name, "x": enc(b[1 : 1+n]), "y": enc(b[1+n:]), "kid": kid}
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "n": enc(k.N.Bytes()), "e": enc(big.NewInt(int64(k.E)).Bytes()), "kid": kid}
	}
	t.Fatalf("no JWK for %T", pub)
	return nil
}

func TestAgainstOIDCProvider(t *testing.T) {
	rs := newResourceServer(t)
	// The private_key_jwt clients' keys: ES256 for client credentials,
	// RS256 with a key id for the code flow.
	keys := testKeys(t)
	ecKey, rsaKey := keys[0], keys[4]
	jwks, err := json.Marshal(map[string]any{
		"service-jwt":       map[string]any{"keys": []any{publicJWK(t, ecKey.key.Public(), "ec-1")}},
		"preregistered-jwt": map[string]any{"keys": []any{publicJWK(t, rsaKey.key.Public(), "rsa-1")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rs.issuer = startProvider(t, rs.Resource, "CLIENT_JWKS="+string(jwks))
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := r.Header.Get("Authorization"); a != "" {
			t.Errorf("another origin got Authorization %q", a)
		}
	}))
	defer other.Close()
	rs.away = other.URL + "/mcp"
	ctx := context.Background()
	hc := &http.Client{}

	// discover asks the resource, gets its 401, and discovers from it.
	discover := func(t *testing.T) Discovery {
		t.Helper()
		resp, err := hc.Get(rs.Resource)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ch := Classify(resp)
		if ch.Kind != NeedsAuthorization || ch.ResourceMetadata != rs.metadataURL() {
			t.Fatalf("the resource's answer = %d %+v", resp.StatusCode, ch)
		}
		d, err := Discover(ctx, hc, rs.Resource, ch.WWWAuthenticate)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	opts := RegisterOptions{Metadata: ClientMetadata{ClientName: "agentbot test", RedirectURIs: []string{redirectURL}}}
	// connect runs a whole code flow, with the Flow and the Client through
	// JSON in between, as they would be through the store.
	connect := func(t *testing.T, d Discovery, c Client, scopes []string) (Token, Flow, url.Values) {
		t.Helper()
		f, authURL, err := Begin(d, c, BeginOptions{RedirectURL: redirectURL, Scopes: scopes, Caller: map[string]string{"team": "T1", "user": "U1", "server": "rs"}})
		if err != nil {
			t.Fatal(err)
		}
		f = roundTrip(t, f)
		q := follow(t, authURL)
		tok, err := Finish(ctx, hc, roundTrip(t, c), f, q)
		if err != nil {
			noSecrets(t, err, q.Get("code"), f.Verifier, c.Secret)
			t.Fatal(err)
		}
		return tok, f, q
	}

	t.Run("discovery from a 401", func(t *testing.T) {
		d := discover(t)
		as := d.AuthServer
		if d.Resource != rs.Resource || d.ResourceMetadataURL != rs.metadataURL() || as.Issuer != rs.issuer ||
			!slices.Equal(d.Scopes, []string{"mcp:read"}) || as.RegistrationEndpoint == "" || as.RevocationEndpoint == "" ||
			!as.AuthorizationResponseIssParameterSupported || as.ClientIDMetadataDocumentSupported {
			t.Fatalf("discovery = %+v", d)
		}
		// Without a 401: the well-known URI at the path, and the resource's
		// scopes_supported.
		d, err := Discover(ctx, hc, rs.Resource, nil)
		if err != nil || d.AuthServer.Issuer != rs.issuer || !slices.Equal(d.Scopes, []string{"mcp:read", "mcp:write"}) {
			t.Fatalf("discovery without a challenge = %+v, %v", d, err)
		}
	})

	t.Run("dynamic registration, code flow, refresh, revoke", func(t *testing.T) {
		d := discover(t)
		c, err := Register(ctx, hc, d, opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.Registration != RegistrationDynamic || c.ID == "" || c.Secret == "" || c.AuthMethod != AuthClientSecretBasic ||
			c.Issuer != rs.issuer || c.TokenURL != d.AuthServer.TokenEndpoint || c.RevocationURL != d.AuthServer.RevocationEndpoint {
			t.Fatalf("client = %v", c)
		}
		tok, f, q := connect(t, d, c, nil)
		if q.Get("iss") != rs.issuer || f.Caller["user"] != "U1" {
			t.Fatalf("redirect %v, flow %v", q, f)
		}
		if tok.AccessToken == "" || tok.RefreshToken == "" || tok.Expiry.IsZero() || tok.Expired(time.Now()) ||
			tok.Resource != rs.Resource || tok.Issuer != rs.issuer || tok.ClientID != c.ID || !slices.Contains(tok.Scopes, "mcp:read") {
			t.Fatalf("token = %v", tok)
		}
		cl, err := jwtClaims(tok.AccessToken)
		if err != nil || !slices.Equal(cl.Audience, []string{rs.Resource}) || cl.Subject != "test-user" || cl.ClientID != c.ID {
			t.Fatalf("access token claims = %+v, %v", cl, err)
		}

		// The token goes to its resource, and not across a redirect to
		// another origin (other fails the test if it sees it).
		tok = roundTrip(t, tok)
		api := &http.Client{Transport: &Transport{Resource: tok.Resource, Token: func(context.Context) (Token, error) { return tok, nil }}}
		for _, u := range []string{rs.Resource, rs.URL + "/mcp/away", other.URL + "/mcp"} {
			resp, err := api.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if u == rs.Resource && (resp.StatusCode != 200 || string(b) != "ok test-user") {
				t.Fatalf("the resource answered %d %q", resp.StatusCode, b)
			}
		}

		// Refresh: a new access token for the same resource.
		n, err := Refresh(ctx, hc, c, tok)
		if err != nil {
			t.Fatal(err)
		}
		ncl, err := jwtClaims(n.AccessToken)
		if n.AccessToken == tok.AccessToken || n.RefreshToken == "" || n.Resource != rs.Resource || err != nil || !slices.Equal(ncl.Audience, []string{rs.Resource}) {
			t.Fatalf("refreshed = %v (claims %+v, %v)", n, ncl, err)
		}

		// Revoke, then the refresh token is dead.
		if err := Revoke(ctx, hc, c, n); err != nil {
			t.Fatal(err)
		}
		_, err = Refresh(ctx, hc, c, n)
		if !errors.Is(err, ErrInvalidGrant) {
			t.Fatalf("refresh after revocation = %v", err)
		}
		noSecrets(t, err, n.RefreshToken, n.AccessToken, c.Secret, tok.RefreshToken)

		// A new connection, and its redirect again: the code is spent, and
		// the server ends the grant it made (RFC 6749 section 4.1.2), so
		// its refresh token is dead too.
		tok, f, q = connect(t, d, c, nil)
		_, err = Finish(ctx, hc, c, f, q)
		if !errors.Is(err, ErrInvalidGrant) {
			t.Fatalf("a replayed redirect = %v", err)
		}
		noSecrets(t, err, q.Get("code"), f.Verifier, c.Secret, tok.AccessToken)
		if _, err := Refresh(ctx, hc, c, tok); !errors.Is(err, ErrInvalidGrant) {
			t.Fatalf("refresh after a replayed code = %v", err)
		}
	})

	t.Run("pre-registered client", func(t *testing.T) {
		d := discover(t)
		o := opts
		o.Preregistered = &Credentials{ClientID: "preregistered", ClientSecret: "preregistered-secret-not-a-real-one", Issuer: rs.issuer + "/"}
		c, err := Register(ctx, hc, d, o)
		if err != nil || c.Registration != RegistrationPreregistered || c.AuthMethod != AuthClientSecretPost {
			t.Fatalf("client = %v, %v", c, err)
		}
		tok, _, _ := connect(t, d, c, nil)
		if cl, err := jwtClaims(tok.AccessToken); err != nil || cl.ClientID != "preregistered" || !slices.Equal(cl.Audience, []string{rs.Resource}) {
			t.Fatalf("claims = %+v, %v", cl, err)
		}
		bad := c
		bad.Secret = "a-wrong-secret"
		_, err = Refresh(ctx, hc, bad, tok)
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "invalid_client" {
			t.Fatalf("refresh with a wrong secret = %v", err)
		}
		noSecrets(t, err, "a-wrong-secret", tok.RefreshToken)
	})

	t.Run("step-up on insufficient_scope", func(t *testing.T) {
		d := discover(t)
		c, err := Register(ctx, hc, d, opts)
		if err != nil {
			t.Fatal(err)
		}
		tok, _, _ := connect(t, d, c, nil)
		var challenges []Challenge
		api := &http.Client{Transport: &Transport{Resource: rs.Resource,
			Token:       func(context.Context) (Token, error) { return tok, nil },
			OnChallenge: func(_ *http.Request, ch Challenge) { challenges = append(challenges, ch) }}}
		get := func() int {
			resp, err := api.Get(rs.URL + "/mcp/write")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if s := get(); s != http.StatusForbidden || len(challenges) != 1 || challenges[0].Kind != InsufficientScope {
			t.Fatalf("write with mcp:read = %d, %+v", s, challenges)
		}
		want := StepUpScopes(tok.Scopes, challenges[0])
		if !slices.Contains(want, "mcp:read") || !slices.Contains(want, "mcp:write") {
			t.Fatalf("step-up scopes = %v", want)
		}
		tok, _, _ = connect(t, d, c, want)
		if s := get(); s != http.StatusOK || !slices.Contains(tok.Scopes, "mcp:write") {
			t.Fatalf("write after the step-up = %d, scopes %v", s, tok.Scopes)
		}
	})

	t.Run("forged, replayed elsewhere, expired, wrong issuer, denied", func(t *testing.T) {
		d := discover(t)
		c, err := Register(ctx, hc, d, opts)
		if err != nil {
			t.Fatal(err)
		}
		f, authURL, err := Begin(d, c, BeginOptions{RedirectURL: redirectURL})
		if err != nil {
			t.Fatal(err)
		}
		q := follow(t, authURL)
		code := q.Get("code")
		set := func(k, v string) url.Values {
			n := url.Values{}
			for kk, vv := range q {
				n[kk] = slices.Clone(vv)
			}
			if v == "" {
				n.Del(k)
			} else {
				n.Set(k, v)
			}
			return n
		}
		expired := f
		expired.Expires = time.Now().Add(-time.Minute)
		other, _, _ := Begin(d, c, BeginOptions{RedirectURL: redirectURL})
		for name, tc := range map[string]struct {
			f    Flow
			q    url.Values
			want error
		}{
			"forged state":           {f, set("state", "forged-state"), ErrState},
			"another flow's state":   {other, q, ErrState},
			"expired":                {expired, q, ErrExpired},
			"wrong iss":              {f, set("iss", "http://127.0.0.1:1"), ErrIssuer},
			"no iss (advertised)":    {f, set("iss", ""), ErrIssuer},
			"error response":         {f, url.Values{"error": {"access_denied"}, "state": {f.State}, "iss": {rs.issuer}}, ErrDenied},
			"error with a wrong iss": {f, url.Values{"error": {"access_denied"}, "state": {f.State}, "iss": {"http://evil"}}, ErrIssuer},
		} {
			_, err := Finish(ctx, hc, c, tc.f, tc.q)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", name, err, tc.want)
			}
			noSecrets(t, err, code, f.Verifier, c.Secret, f.State)
		}
		// None of them spent the code: the genuine redirect still works.
		if tok, err := Finish(ctx, hc, c, f, q); err != nil || tok.AccessToken == "" {
			t.Fatalf("the genuine redirect after the refusals = %v", err)
		}

		// The server's own refusal (a scope the resource does not have)
		// comes back as an error redirect.
		f, authURL, err = Begin(d, c, BeginOptions{RedirectURL: redirectURL, Scopes: []string{"mcp:admin"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Finish(ctx, hc, c, f, follow(t, authURL))
		var se *ServerError
		if !errors.Is(err, ErrDenied) || !errors.As(err, &se) || se.Code != "access_denied" {
			t.Fatalf("the server's refusal = %v", err)
		}
	})

	t.Run("client credentials", func(t *testing.T) {
		d := discover(t)
		cr := Credentials{ClientID: "service", ClientSecret: "service-secret-not-a-real-one", Issuer: rs.issuer}
		tok, err := ClientCredentials(ctx, hc, d, cr)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := jwtClaims(tok.AccessToken)
		if err != nil || !slices.Equal(cl.Audience, []string{rs.Resource}) || cl.ClientID != "service" || tok.RefreshToken != "" || tok.Resource != rs.Resource {
			t.Fatalf("token %v, claims %+v, %v", tok, cl, err)
		}
		api := &http.Client{Transport: &Transport{Resource: rs.Resource, Token: func(context.Context) (Token, error) { return tok, nil }}}
		resp, err := api.Get(rs.Resource)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("the resource with the service token = %v, %v", resp, err)
		}
		resp.Body.Close()
		cr.ClientSecret = "a-wrong-service-secret"
		_, err = ClientCredentials(ctx, hc, d, cr)
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "invalid_client" {
			t.Fatalf("a wrong secret = %v", err)
		}
		noSecrets(t, err, cr.ClientSecret)
	})

	t.Run("client credentials with private_key_jwt", func(t *testing.T) {
		d := discover(t)
		if !slices.Contains(d.AuthServer.TokenEndpointAuthMethodsSupported, AuthPrivateKeyJWT) {
			t.Fatalf("the provider offers %v", d.AuthServer.TokenEndpointAuthMethodsSupported)
		}
		k, err := ParseClientKey(ecKey.pem, "")
		if err != nil {
			t.Fatal(err)
		}
		cr := Credentials{ClientID: "service-jwt", ClientKey: k, Issuer: rs.issuer}
		// Twice: the provider refuses a replayed jti, so each request
		// must sign a new assertion.
		for range 2 {
			tok, err := ClientCredentials(ctx, hc, d, cr)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := jwtClaims(tok.AccessToken)
			if err != nil || !slices.Equal(cl.Audience, []string{rs.Resource}) || cl.ClientID != "service-jwt" || tok.Resource != rs.Resource {
				t.Fatalf("token %v, claims %+v, %v", tok, cl, err)
			}
		}
		// Another key of the same kind is not the registered one.
		other, err := ParseClientKey(testKeys(t)[0].pem, "")
		if err != nil {
			t.Fatal(err)
		}
		cr.ClientKey = other
		_, err = ClientCredentials(ctx, hc, d, cr)
		var se *ServerError
		if !errors.As(err, &se) || se.Code != "invalid_client" {
			t.Fatalf("a wrong key = %v", err)
		}
	})

	t.Run("pre-registered private_key_jwt client: code flow, refresh, revoke", func(t *testing.T) {
		d := discover(t)
		k, err := ParseClientKey(rsaKey.pem, "rsa-1")
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Preregistered = &Credentials{ClientID: "preregistered-jwt", ClientKey: k}
		c, err := Register(ctx, hc, d, o)
		if err != nil || c.AuthMethod != AuthPrivateKeyJWT || c.Key == nil {
			t.Fatalf("client = %v, %v", c, err)
		}
		// Through the store (JSON, sealed there) with its key, as the
		// callback and a revocation find it.
		f, authURL, err := Begin(d, c, BeginOptions{RedirectURL: redirectURL})
		if err != nil {
			t.Fatal(err)
		}
		stored := roundTrip(t, c)
		tok, err := Finish(ctx, hc, stored, f, follow(t, authURL))
		if err != nil {
			t.Fatal(err)
		}
		if cl, err := jwtClaims(tok.AccessToken); err != nil || cl.ClientID != "preregistered-jwt" || tok.RefreshToken == "" {
			t.Fatalf("token %v, claims %+v, %v", tok, cl, err)
		}
		n, err := Refresh(ctx, hc, stored, tok)
		if err != nil || n.AccessToken == tok.AccessToken {
			t.Fatalf("refresh = %v, %v", n, err)
		}
		if err := Revoke(ctx, hc, stored, n); err != nil {
			t.Fatal(err)
		}
		if _, err := Refresh(ctx, hc, stored, n); !errors.Is(err, ErrInvalidGrant) {
			t.Fatalf("refresh after revocation = %v", err)
		}
	})
}
