package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// stubAS is a Go stand-in authorization server for the tests that need no
// node: metadata, a registration endpoint and a token endpoint that
// records its forms.
type stubAS struct {
	*httptest.Server
	meta oauthex.AuthServerMeta
	mu   sync.Mutex
	regs []oauthex.ClientRegistrationMetadata
	reqs []url.Values
}

func newStubAS(t *testing.T, edit func(*oauthex.AuthServerMeta)) *stubAS {
	s := &stubAS{}
	mux := http.NewServeMux()
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	s.meta = oauthex.AuthServerMeta{
		Issuer:                        s.URL,
		AuthorizationEndpoint:         s.URL + "/authorize",
		TokenEndpoint:                 s.URL + "/token",
		RegistrationEndpoint:          s.URL + "/register",
		RevocationEndpoint:            s.URL + "/revoke",
		CodeChallengeMethodsSupported: []string{"S256"},
		ResponseTypesSupported:        []string{"code"},
		ScopesSupported:               []string{"read", "offline_access"},
	}
	if edit != nil {
		edit(&s.meta)
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s.meta)
	})
	mux.HandleFunc("POST /register", func(w http.ResponseWriter, r *http.Request) {
		var m oauthex.ClientRegistrationMetadata
		json.NewDecoder(r.Body).Decode(&m)
		s.mu.Lock()
		s.regs = append(s.regs, m)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"client_id":"dyn-1","client_secret":"dyn-secret-xyz","token_endpoint_auth_method":%q,"redirect_uris":["https://bot.example/cb"]}`, m.TokenEndpointAuthMethod)
	})
	mux.HandleFunc("POST /revoke", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		s.mu.Lock()
		s.reqs = append(s.reqs, r.PostForm)
		s.mu.Unlock()
		if r.PostForm.Get("token_type_hint") == "access_token" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"unsupported_token_type"}`)
		}
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		s.mu.Lock()
		s.reqs = append(s.reqs, r.PostForm)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("refresh_token") == "dead-refresh-token" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":"invalid_grant","error_description":"grant request is invalid","echo":"dead-refresh-token"}`)
			return
		}
		io.WriteString(w, `{"access_token":"new-access-token","token_type":"Bearer","expires_in":"3600"}`)
	})
	return s
}

// Discovery without node: the 401's resource_metadata, scopes from the
// challenge else from scopes_supported, the well-known URI at the path
// when there is no header, and a server without PKCE S256 refused.
func TestDiscoverStub(t *testing.T) {
	as := newStubAS(t, nil)
	var rs *httptest.Server
	rs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" || r.URL.Path == "/meta" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(oauthex.ProtectedResourceMetadata{Resource: rs.URL + "/mcp",
				AuthorizationServers: []string{as.URL}, ScopesSupported: []string{"read", "write"}})
			return
		}
		http.NotFound(w, r)
	}))
	defer rs.Close()
	ctx := context.Background()

	d, err := Discover(ctx, nil, rs.URL+"/mcp", []string{`Bearer resource_metadata="` + rs.URL + `/meta", scope="read"`})
	if err != nil {
		t.Fatal(err)
	}
	if d.Resource != rs.URL+"/mcp" || d.ResourceMetadataURL != rs.URL+"/meta" || d.AuthServer.Issuer != as.URL ||
		!reflect.DeepEqual(d.Scopes, []string{"read"}) {
		t.Fatalf("discovery from the header = %+v", d)
	}
	d, err = Discover(ctx, nil, rs.URL+"/mcp", nil)
	if err != nil || d.ResourceMetadataURL != rs.URL+"/.well-known/oauth-protected-resource/mcp" || !reflect.DeepEqual(d.Scopes, []string{"read", "write"}) {
		t.Fatalf("discovery from the well-known URI = %+v, %v", d, err)
	}
	// The discovery is a plain value.
	var back Discovery
	b, _ := json.Marshal(d)
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, d) {
		t.Fatalf("discovery JSON round trip: %v\n%+v\n%+v", err, back, d)
	}

	noPKCE := newStubAS(t, func(m *oauthex.AuthServerMeta) { m.CodeChallengeMethodsSupported = []string{"plain"} })
	prs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(oauthex.ProtectedResourceMetadata{Resource: "http://" + r.Host, AuthorizationServers: []string{noPKCE.URL}})
	}))
	defer prs.Close()
	if _, err := Discover(ctx, nil, prs.URL, nil); err == nil || !strings.Contains(err.Error(), "S256") {
		t.Fatalf("a server without S256 = %v", err)
	}
}

// Registration follows the specification's order: the client ID metadata
// document where the server supports it, else pre-registered credentials,
// else dynamic registration; with none usable, ErrNoRegistration.
func TestRegisterOrder(t *testing.T) {
	ctx := context.Background()
	cimd := newStubAS(t, func(m *oauthex.AuthServerMeta) { m.ClientIDMetadataDocumentSupported = true })
	plain := newStubAS(t, func(m *oauthex.AuthServerMeta) {
		m.TokenEndpointAuthMethodsSupported = []string{"client_secret_basic", "none"}
	})
	bare := newStubAS(t, func(m *oauthex.AuthServerMeta) { m.RegistrationEndpoint = "" })
	disc := func(s *stubAS) Discovery { return Discovery{Resource: "https://mcp.example/mcp", AuthServer: s.meta} }
	pre := &Credentials{ClientID: "pre-1", ClientSecret: "pre-secret-abc"}
	all := RegisterOptions{MetadataDocumentURL: "https://bot.example/oauth/client.json", Preregistered: pre,
		Metadata: ClientMetadata{ClientName: "agentbot", RedirectURIs: []string{"https://bot.example/cb"}}}

	c, err := Register(ctx, nil, disc(cimd), all)
	if err != nil || c.Registration != RegistrationMetadataDocument || c.ID != all.MetadataDocumentURL || c.AuthMethod != AuthNone || c.Secret != "" {
		t.Fatalf("with CIMD support = %v, %v", c, err)
	}
	c, err = Register(ctx, nil, disc(plain), all)
	if err != nil || c.Registration != RegistrationPreregistered || c.ID != "pre-1" || c.Secret != "pre-secret-abc" || c.AuthMethod != AuthClientSecretBasic {
		t.Fatalf("without CIMD support = %v, %v", c, err)
	}
	wrong := *pre
	wrong.Issuer = "https://other.example"
	if _, err := Register(ctx, nil, disc(plain), RegisterOptions{Preregistered: &wrong}); !errors.Is(err, ErrIssuer) {
		t.Fatalf("credentials for another issuer = %v", err)
	}
	noPre := all
	noPre.Preregistered = nil
	c, err = Register(ctx, nil, disc(plain), noPre)
	if err != nil || c.Registration != RegistrationDynamic || c.ID != "dyn-1" || c.Secret != "dyn-secret-xyz" || c.AuthMethod != AuthClientSecretBasic ||
		c.TokenURL != plain.meta.TokenEndpoint || c.RevocationURL != plain.meta.RevocationEndpoint || c.Issuer != plain.URL {
		t.Fatalf("dynamic registration = %v, %v", c, err)
	}
	if r := plain.regs[0]; r.ClientName != "agentbot" || !reflect.DeepEqual(r.RedirectURIs, []string{"https://bot.example/cb"}) ||
		!reflect.DeepEqual(r.GrantTypes, []string{"authorization_code", "refresh_token"}) {
		t.Fatalf("registration request = %+v", r)
	}
	if _, err := Register(ctx, nil, disc(bare), noPre); !errors.Is(err, ErrNoRegistration) {
		t.Fatalf("nothing usable = %v", err)
	}
}

// The client ID metadata document: its client_id is its URL, public, code
// and refresh grants; a URL that is not https with a path is refused.
func TestMetadataDocument(t *testing.T) {
	b, err := MetadataDocument("https://bot.example/oauth/client.json", ClientMetadata{ClientName: "agentbot",
		ClientURI: "https://bot.example", RedirectURIs: []string{"https://bot.example/oauth/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"client_id":                  "https://bot.example/oauth/client.json",
		"client_name":                "agentbot",
		"client_uri":                 "https://bot.example",
		"redirect_uris":              []any{"https://bot.example/oauth/callback"},
		"grant_types":                []any{"authorization_code", "refresh_token"},
		"response_types":             []any{"code"},
		"token_endpoint_auth_method": "none",
	}
	if !reflect.DeepEqual(doc, want) {
		t.Fatalf("document = %s", b)
	}
	for _, bad := range []string{"http://bot.example/client.json", "https://bot.example", "https://bot.example/", "client.json"} {
		if _, err := MetadataDocument(bad, ClientMetadata{RedirectURIs: []string{"https://bot.example/cb"}}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := MetadataDocument("https://bot.example/c.json", ClientMetadata{}); err == nil {
		t.Error("no redirect URIs accepted")
	}
}

// The authorization URL carries everything MCP requires, offline_access
// is added where the server lists it, and a Flow survives JSON.
func TestBeginURL(t *testing.T) {
	as := newStubAS(t, nil)
	d := Discovery{Resource: "https://mcp.example/mcp", AuthServer: as.meta, Scopes: []string{"read"}}
	c := Client{ID: "cid", Issuer: as.URL, TokenURL: as.meta.TokenEndpoint, AuthMethod: AuthNone}
	f, raw, err := Begin(d, c, BeginOptions{RedirectURL: "https://bot.example/cb", Caller: map[string]string{"team": "T1", "user": "U1"}})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(raw)
	q := u.Query()
	if u.Path != "/authorize" || q.Get("response_type") != "code" || q.Get("client_id") != "cid" || q.Get("redirect_uri") != "https://bot.example/cb" ||
		q.Get("scope") != "read offline_access" || q.Get("state") != f.State || len(f.State) < 26 || q.Get("resource") != d.Resource ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || strings.Contains(raw, f.Verifier) {
		t.Fatalf("authorization URL = %s", raw)
	}
	if f.Caller["user"] != "U1" || !f.Expires.After(f.Created) {
		t.Fatalf("flow = %+v", f)
	}
	f2, _, _ := Begin(d, c, BeginOptions{RedirectURL: "https://bot.example/cb"})
	if f2.State == f.State || f2.Verifier == f.Verifier {
		t.Fatal("two flows share a state or a verifier")
	}
	var back Flow
	b, _ := json.Marshal(f)
	if err := json.Unmarshal(b, &back); err != nil || back.State != f.State || back.Verifier != f.Verifier || !back.Expires.Equal(f.Expires) || back.Caller["team"] != "T1" {
		t.Fatalf("flow JSON round trip: %v %s", err, b)
	}
	if _, _, err := Begin(d, Client{ID: "cid", Issuer: "https://other.example"}, BeginOptions{RedirectURL: "https://bot.example/cb"}); !errors.Is(err, ErrIssuer) {
		t.Fatalf("a client of another server = %v", err)
	}
}

// Refresh sends the resource, keeps the refresh token the server did not
// replace, and an invalid_grant answer is ErrInvalidGrant, without the
// server's echo of the token.
func TestRefreshStub(t *testing.T) {
	as := newStubAS(t, nil)
	c := Client{ID: "cid", Secret: "client-secret-123", AuthMethod: AuthClientSecretPost, Issuer: as.URL, TokenURL: as.meta.TokenEndpoint}
	old := Token{AccessToken: "old-access", RefreshToken: "live-refresh-token", Resource: "https://mcp.example/mcp", Issuer: as.URL, ClientID: "cid", Scopes: []string{"read"}}
	n, err := Refresh(context.Background(), nil, c, old)
	if err != nil {
		t.Fatal(err)
	}
	if n.AccessToken != "new-access-token" || n.RefreshToken != "live-refresh-token" || n.Resource != old.Resource || n.Expiry.IsZero() || !reflect.DeepEqual(n.Scopes, []string{"read"}) {
		t.Fatalf("refreshed = %#v", n)
	}
	if f := as.reqs[0]; f.Get("resource") != old.Resource || f.Get("grant_type") != "refresh_token" || f.Get("client_secret") != "client-secret-123" {
		t.Fatalf("refresh form = %v", f)
	}
	old.RefreshToken = "dead-refresh-token"
	_, err = Refresh(context.Background(), nil, c, old)
	if !errors.Is(err, ErrInvalidGrant) || strings.Contains(err.Error(), "dead-refresh-token") || strings.Contains(err.Error(), "client-secret-123") {
		t.Fatalf("a dead refresh token = %v", err)
	}
	if _, err := Refresh(context.Background(), nil, Client{ID: "other", Issuer: as.URL}, old); !errors.Is(err, ErrIssuer) {
		t.Fatalf("another client's token = %v", err)
	}
}

// Revoke ends the refresh token, then tries the access token: a server
// that cannot revoke a (JWT) access token is fine once the refresh token
// is revoked, not when there is no refresh token; no revocation endpoint
// is ErrNoRevocation.
func TestRevokeStub(t *testing.T) {
	as := newStubAS(t, nil)
	c := Client{ID: "cid", Secret: "client-secret-123", AuthMethod: AuthClientSecretBasic, Issuer: as.URL, TokenURL: as.meta.TokenEndpoint, RevocationURL: as.meta.RevocationEndpoint}
	tok := Token{AccessToken: "acc-1", RefreshToken: "ref-1", Issuer: as.URL, ClientID: "cid"}
	if err := Revoke(context.Background(), nil, c, tok); err != nil {
		t.Fatal(err)
	}
	if len(as.reqs) != 2 || as.reqs[0].Get("token") != "ref-1" || as.reqs[0].Get("token_type_hint") != "refresh_token" ||
		as.reqs[1].Get("token") != "acc-1" || as.reqs[0].Get("client_secret") != "" {
		t.Fatalf("revocation requests = %v", as.reqs)
	}
	tok.RefreshToken = ""
	err := Revoke(context.Background(), nil, c, tok)
	var se *ServerError
	if !errors.As(err, &se) || se.Code != "unsupported_token_type" || strings.Contains(err.Error(), "acc-1") {
		t.Fatalf("an access token alone = %v", err)
	}
	c.RevocationURL = ""
	if err := Revoke(context.Background(), nil, c, tok); !errors.Is(err, ErrNoRevocation) {
		t.Fatalf("no endpoint = %v", err)
	}
}

// Token, Flow, Client and Credentials print and log without their
// secrets, however they are formatted.
func TestRedacted(t *testing.T) {
	secrets := []string{"access-abc", "refresh-def", "state-ghi", "verifier-jkl", "secret-mno"}
	tok := Token{AccessToken: secrets[0], RefreshToken: secrets[1], Resource: "https://mcp.example/mcp"}
	f := Flow{State: secrets[2], Verifier: secrets[3], Resource: "https://mcp.example/mcp"}
	c := Client{ID: "cid", Secret: secrets[4]}
	cr := Credentials{ClientID: "cid", ClientSecret: secrets[4]}
	var buf bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&buf, nil), slog.NewTextHandler(&buf, nil)} {
		slog.New(h).Info("x", "token", tok, "flow", f, "client", c, "creds", cr, "ptr", &tok)
	}
	for _, v := range []any{tok, f, c, cr, &tok, []Token{tok}} {
		fmt.Fprintf(&buf, "%v %+v %#v %s\n", v, v, v, v)
	}
	out := buf.String()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Fatalf("%q printed:\n%s", s, out)
		}
	}
	if !strings.Contains(out, "https://mcp.example/mcp") {
		t.Fatalf("nothing useful printed:\n%s", out)
	}
}

// Finish refuses before any request: a forged or missing state, an
// expired flow, an error response, a missing or wrong iss; errors name no
// code.
func TestFinishRefusesStub(t *testing.T) {
	as := newStubAS(t, func(m *oauthex.AuthServerMeta) { m.AuthorizationResponseIssParameterSupported = true })
	d := Discovery{Resource: "https://mcp.example/mcp", AuthServer: as.meta}
	c := Client{ID: "cid", Issuer: as.URL, TokenURL: as.meta.TokenEndpoint, AuthMethod: AuthNone}
	f, _, err := Begin(d, c, BeginOptions{RedirectURL: "https://bot.example/cb"})
	if err != nil {
		t.Fatal(err)
	}
	good := url.Values{"code": {"the-code-123"}, "state": {f.State}, "iss": {as.URL}}
	with := func(k, v string) url.Values {
		q := url.Values{}
		for kk, vv := range good {
			q[kk] = vv
		}
		if v == "" {
			q.Del(k)
		} else {
			q.Set(k, v)
		}
		return q
	}
	expired := f
	expired.Expires = time.Now().Add(-time.Second)
	for name, tc := range map[string]struct {
		f    Flow
		q    url.Values
		want error
	}{
		"forged state":  {f, with("state", "forged"), ErrState},
		"no state":      {f, with("state", ""), ErrState},
		"expired":       {expired, good, ErrExpired},
		"no iss":        {f, with("iss", ""), ErrIssuer},
		"wrong iss":     {f, with("iss", "https://evil.example"), ErrIssuer},
		"access denied": {f, url.Values{"error": {"access_denied"}, "state": {f.State}, "iss": {as.URL}}, ErrDenied},
	} {
		_, err := Finish(context.Background(), nil, c, tc.f, tc.q)
		if !errors.Is(err, tc.want) || strings.Contains(err.Error(), "the-code-123") || strings.Contains(err.Error(), f.Verifier) || strings.Contains(err.Error(), f.State) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(as.reqs) != 0 {
		t.Fatalf("the token endpoint was called %d times", len(as.reqs))
	}
}

// A 2025-03-26 server (no protected resource metadata) whose root
// metadata names an issuer under a path is its own authorization server:
// its metadata is taken without the RFC 8414 issuer check, which applies
// where protected resource metadata names the issuer.
func TestDiscoverLegacyIssuerUnderPath(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": srv.URL + "/oauth", "authorization_endpoint": srv.URL + "/oauth/authorize",
			"token_endpoint": srv.URL + "/oauth/token", "code_challenge_methods_supported": []string{"S256"},
		})
	}))
	defer srv.Close()
	d, err := Discover(context.Background(), nil, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.AuthServer.Issuer != srv.URL+"/oauth" || d.AuthServer.TokenEndpoint != srv.URL+"/oauth/token" || d.Resource != srv.URL+"/mcp" || d.ResourceMetadataURL != "" {
		t.Fatalf("discovery = %+v", d)
	}
}
