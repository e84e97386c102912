package connect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"agentbot/engine/mcp"
	"agentbot/engine/mcp/oauth"
)

var errNotFound = errors.New("not found")

// memStore is a Store in memory, shared by the Connectors of a test as
// replicas share a database.
type memStore struct {
	mu      sync.Mutex
	tokens  map[string]oauth.Token
	clients map[string]oauth.Client
	flows   map[string]oauth.Flow
}

func newMemStore() *memStore {
	return &memStore{tokens: map[string]oauth.Token{}, clients: map[string]oauth.Client{}, flows: map[string]oauth.Flow{}}
}

func tkey(team, user, server string) string { return team + "/" + user + "/" + server }

func (m *memStore) PutToken(_ context.Context, team, user, server, _ string, t oauth.Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tokens[tkey(team, user, server)] = t
	return nil
}

func (m *memStore) Token(_ context.Context, team, user, server string) (oauth.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[tkey(team, user, server)]
	if !ok {
		return oauth.Token{}, fmt.Errorf("credential %s: %w", tkey(team, user, server), errNotFound)
	}
	return t, nil
}

func (m *memStore) PutClient(_ context.Context, server string, c oauth.Client) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clients[server] = c
	return nil
}

func (m *memStore) Client(_ context.Context, server string) (oauth.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.clients[server]
	if !ok {
		return oauth.Client{}, errNotFound
	}
	return c, nil
}

func (m *memStore) PutFlow(_ context.Context, f oauth.Flow) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flows[f.State] = f
	return nil
}

func (m *memStore) TakeFlow(_ context.Context, state string) (oauth.Flow, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.flows[state]
	if !ok || !time.Now().Before(f.Expires) {
		return oauth.Flow{}, errNotFound
	}
	delete(m.flows, state)
	return f, nil
}

func (m *memStore) Delete(_ context.Context, team, user, server string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := tkey(team, user, server)
	if _, ok := m.tokens[k]; !ok {
		return errNotFound
	}
	delete(m.tokens, k)
	return nil
}

func (m *memStore) token(team, user, server string) (oauth.Token, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[tkey(team, user, server)]
	return t, ok
}

// provider is a stub authorization server with a protected resource: its
// authorization endpoint approves at once (redirecting with a code), its
// token endpoint checks PKCE and the resource, issues rotating refresh
// tokens, and offers client credentials for one confidential client.
type provider struct {
	*httptest.Server
	resource string
	cimd     bool // client_id_metadata_document_supported

	mu      sync.Mutex
	n       int
	codes   map[string]codeGrant
	refresh map[string]bool // live refresh tokens
	forms   []url.Values
	regs    int
}

type codeGrant struct{ challenge, resource, clientID, redirect, scope string }

const (
	svcID     = "svc-client"
	svcSecret = "svc-secret-value"
)

func newProvider(t *testing.T, cimd bool) *provider {
	p := &provider{cimd: cimd, codes: map[string]codeGrant{}, refresh: map[string]bool{}}
	mux := http.NewServeMux()
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	p.resource = p.URL + "/mcp"
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(oauthex.ProtectedResourceMetadata{Resource: p.resource,
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
		io.WriteString(w, `{"client_id":"dyn-1","client_secret":"dyn-secret-value","token_endpoint_auth_method":"client_secret_basic"}`)
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("resource") != p.resource {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.n++
		code := fmt.Sprintf("code-%d", p.n)
		p.codes[code] = codeGrant{q.Get("code_challenge"), q.Get("resource"), q.Get("client_id"), q.Get("redirect_uri"), q.Get("scope")}
		p.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {p.URL}}
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
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
		if f.Get("resource") != p.resource {
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
			if id != svcID || secret != svcSecret {
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"error":"invalid_client"}`)
				return
			}
			p.n++
			fmt.Fprintf(w, `{"access_token":"svc-access-%d","token_type":"Bearer","expires_in":3600}`, p.n)
			return
		default:
			fail("unsupported_grant_type")
			return
		}
		p.n++
		rt := fmt.Sprintf("refresh-%d", p.n)
		p.refresh[rt] = true
		fmt.Fprintf(w, `{"access_token":"access-%d","token_type":"Bearer","refresh_token":%q,"expires_in":3600,"scope":"read offline_access"}`, p.n, rt)
	})
	return p
}

// revokeAll makes every refresh token invalid (the person revoked the
// grant at the server).
func (p *provider) revokeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.refresh)
}

func (p *provider) grantTypes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, f := range p.forms {
		out = append(out, f.Get("grant_type"))
	}
	return out
}

// lockedBuffer collects a test's log.
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

// replica is a Connector with its public side served.
type replica struct {
	*Connector
	pub       *httptest.Server
	connected chan string
}

func newReplica(t *testing.T, st Store, public string, log *lockedBuffer) *replica {
	r := &replica{connected: make(chan string, 4)}
	r.Connector = &Connector{Store: st, NotFound: errNotFound, ServiceUser: "(service)", ClientName: "agentbot test",
		OnConnected: func(team, user, server string) { r.connected <- team + "/" + user + "/" + server },
		Log:         slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	r.pub = httptest.NewUnstartedServer(r.Handler())
	// Replicas share one public URL (behind a load balancer); each
	// serves its own listener here, and a test picks which one a
	// redirect reaches.
	r.PublicURL = public
	r.pub.Start()
	t.Cleanup(r.pub.Close)
	if r.PublicURL == "" {
		r.PublicURL = r.pub.URL
	}
	return r
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authorize opens authURL as the person's browser would, and returns the
// redirect back to agentbot.
func authorize(t *testing.T, authURL string) *url.URL {
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

// callback delivers the redirect's query to replica r's public side.
func callback(t *testing.T, r *replica, back *url.URL) (int, string) {
	t.Helper()
	resp, err := http.Get(r.pub.URL + CallbackPath + "?" + back.RawQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func server(p *provider) *mcp.Server {
	return &mcp.Server{Name: "tracker", Transport: mcp.TransportHTTP, URL: p.resource, Identity: mcp.IdentityUser}
}

var ann = mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: "UANN"}

// noSecret fails when s holds any of the secrets.
func noSecret(t *testing.T, where, s string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			t.Errorf("%s shows a secret (%q):\n%s", where, sec, s)
		}
	}
}

// A person connects: asked, ConnectURL, the authorization, the callback;
// the token is stored for them, Token returns it, it is refreshed when it
// expires, and a revoked grant deletes it and asks again; the flow's
// state serves once; another person has nothing.
func TestConnectRefreshRevoke(t *testing.T) {
	ctx := context.Background()
	p := newProvider(t, false)
	st := newMemStore()
	var log lockedBuffer
	r := newReplica(t, st, "", &log)
	s := server(p)

	// Nothing yet: no token, and a 401 asks the person to connect.
	if tok, err := r.Token(ctx, s, ann); err != nil || tok.AccessToken != "" {
		t.Fatalf("Token before connecting = %v, %v", tok, err)
	}
	ch := oauth.Challenge{Kind: oauth.NeedsAuthorization, Status: 401,
		WWWAuthenticate: []string{`Bearer resource_metadata="` + p.URL + `/.well-known/oauth-protected-resource/mcp"`}}
	_, err := r.Authorize(ctx, s, ann, oauth.Token{}, ch)
	var nc *NeedsConnection
	if !errors.As(err, &nc) || !errors.Is(err, mcp.ErrAuthorizationNeeded) || nc.Server != "tracker" || nc.Who != ann {
		t.Fatalf("Authorize without a token = %v", err)
	}

	authURL, err := r.ConnectURL(ctx, s, ann)
	if err != nil {
		t.Fatal(err)
	}
	back := authorize(t, authURL)
	if got := back.Scheme + "://" + back.Host + back.Path; got != r.PublicURL+CallbackPath {
		t.Fatalf("redirect to %s", got)
	}
	code, page := callback(t, r, back)
	if code != http.StatusOK || !strings.Contains(page, "Connected") {
		t.Fatalf("callback = %d %s", code, page)
	}
	noSecret(t, "the page", page, back.Query().Get("code"), back.Query().Get("state"))
	if got := <-r.connected; got != "T1/UANN/tracker" {
		t.Fatalf("OnConnected(%s)", got)
	}
	stored, ok := st.token("T1", "UANN", "tracker")
	if !ok || stored.AccessToken == "" || stored.RefreshToken == "" || stored.Resource != p.resource {
		t.Fatalf("stored token = %v", stored)
	}
	if c, _ := st.Client(ctx, "tracker"); c.Registration != oauth.RegistrationDynamic {
		t.Fatalf("client = %v (no metadata document support: dynamic registration)", c)
	}

	// A replay of the same redirect is refused and changes nothing.
	if code, page := callback(t, r, back); code != http.StatusBadRequest || !strings.Contains(page, "expired or was already used") {
		t.Fatalf("replayed callback = %d %s", code, page)
	}
	// A forged state likewise.
	forged := *back
	fq := forged.Query()
	fq.Set("state", "forged-state")
	forged.RawQuery = fq.Encode()
	if code, _ := callback(t, r, &forged); code != http.StatusBadRequest {
		t.Fatalf("forged state = %d", code)
	}
	if got, _ := st.token("T1", "UANN", "tracker"); got.AccessToken != stored.AccessToken {
		t.Fatal("a refused callback changed the token")
	}

	tok, err := r.Token(ctx, s, ann)
	if err != nil || tok.AccessToken != stored.AccessToken {
		t.Fatalf("Token = %v, %v", tok, err)
	}
	bob := mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: "UBOB"}
	if tok, err := r.Token(ctx, s, bob); err != nil || tok.AccessToken != "" {
		t.Fatalf("another person's Token = %v, %v", tok, err)
	}

	// Expiry: refreshed, and the new token stored.
	stored.Expiry = time.Now().Add(-time.Minute)
	st.PutToken(ctx, "T1", "UANN", "tracker", "", stored)
	tok, err = r.Token(ctx, s, ann)
	if err != nil || tok.AccessToken == "" || tok.AccessToken == stored.AccessToken || tok.Expired(time.Now()) {
		t.Fatalf("Token after expiry = %v, %v", tok, err)
	}
	if now, _ := st.token("T1", "UANN", "tracker"); now.AccessToken != tok.AccessToken || now.RefreshToken == stored.RefreshToken {
		t.Fatalf("the refreshed token was not stored: %v", now)
	}

	// A 401 to the current token: a refresh answers it.
	t2, err := r.Authorize(ctx, s, ann, tok, ch)
	if err != nil || t2.AccessToken == "" || t2.AccessToken == tok.AccessToken {
		t.Fatalf("Authorize by refresh = %v, %v", t2, err)
	}

	// Revoked at the server: the refresh is refused once, the token is
	// deleted, and the person is asked to connect again.
	p.revokeAll()
	t2.Expiry = time.Now().Add(-time.Minute)
	st.PutToken(ctx, "T1", "UANN", "tracker", "", t2)
	_, err = r.Token(ctx, s, ann)
	if !errors.As(err, &nc) || nc.Who != ann {
		t.Fatalf("Token after revocation = %v", err)
	}
	if _, ok := st.token("T1", "UANN", "tracker"); ok {
		t.Fatal("a refused token was kept")
	}
	before := len(p.grantTypes())
	if tok, err := r.Token(ctx, s, ann); err != nil || tok.AccessToken != "" || len(p.grantTypes()) != before {
		t.Fatalf("Token after the token was deleted = %v, %v (no further refresh)", tok, err)
	}
	if _, err := r.Authorize(ctx, s, ann, oauth.Token{}, ch); !errors.As(err, &nc) {
		t.Fatalf("Authorize after revocation = %v", err)
	}

	noSecret(t, "the log", log.String(), stored.AccessToken, stored.RefreshToken, tok.AccessToken, tok.RefreshToken,
		back.Query().Get("code"), back.Query().Get("state"), "dyn-secret-value")
}

// A flow begun on one replica is finished by another over the same
// store; the client ID metadata document is used where the server
// supports it, and served.
func TestConnectAnotherReplica(t *testing.T) {
	ctx := context.Background()
	p := newProvider(t, true)
	st := newMemStore()
	var log lockedBuffer
	a := newReplica(t, st, "", &log)
	b := newReplica(t, st, a.PublicURL, &log)
	s := server(p)

	authURL, err := a.ConnectURL(ctx, s, ann)
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(authURL); u.Query().Get("client_id") != a.PublicURL+ClientPath {
		t.Fatalf("client_id = %q, want the metadata document", u.Query().Get("client_id"))
	}
	back := authorize(t, authURL)
	if code, page := callback(t, b, back); code != http.StatusOK {
		t.Fatalf("callback on the other replica = %d %s", code, page)
	}
	tok, err := a.Token(ctx, s, ann)
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("Token on the first replica = %v, %v", tok, err)
	}
	if p.regs != 0 {
		t.Fatalf("%d dynamic registrations, want none", p.regs)
	}

	resp, err := http.Get(b.pub.URL + ClientPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || doc["client_id"] != a.PublicURL+ClientPath ||
		fmt.Sprint(doc["redirect_uris"]) != "["+a.PublicURL+CallbackPath+"]" {
		t.Fatalf("client document = %v, %v", doc, err)
	}
}

// An error redirect (declined) and an expired flow are refused with a
// page that says so.
func TestConnectDeclinedAndExpired(t *testing.T) {
	ctx := context.Background()
	p := newProvider(t, false)
	st := newMemStore()
	var log lockedBuffer
	r := newReplica(t, st, "", &log)
	s := server(p)

	authURL, err := r.ConnectURL(ctx, s, ann)
	if err != nil {
		t.Fatal(err)
	}
	back := authorize(t, authURL)
	q := url.Values{"state": {back.Query().Get("state")}, "error": {"access_denied"}, "iss": {p.URL}}
	back.RawQuery = q.Encode()
	if code, page := callback(t, r, back); code != http.StatusBadRequest || !strings.Contains(page, "not granted") {
		t.Fatalf("declined = %d %s", code, page)
	}

	r.FlowTTL = time.Millisecond
	authURL, err = r.ConnectURL(ctx, s, ann)
	if err != nil {
		t.Fatal(err)
	}
	back = authorize(t, authURL)
	time.Sleep(5 * time.Millisecond)
	if code, page := callback(t, r, back); code != http.StatusBadRequest || !strings.Contains(page, "expired") {
		t.Fatalf("expired = %d %s", code, page)
	}
	if _, ok := st.token("T1", "UANN", "tracker"); ok {
		t.Fatal("a refused flow stored a token")
	}
}

// A service identity with a client secret is obtained with client
// credentials, stored under the service user, and obtained again when it
// expires; without a secret an admin must connect it.
func TestServiceClientCredentials(t *testing.T) {
	ctx := context.Background()
	p := newProvider(t, false)
	st := newMemStore()
	var log lockedBuffer
	r := newReplica(t, st, "", &log)
	s := server(p)
	s.Identity = mcp.IdentityService
	s.OAuth = mcp.OAuthSettings{ClientID: svcID, ClientSecret: svcSecret}
	svc := mcp.Identity{Kind: mcp.IdentityService}

	tok, err := r.Authorize(ctx, s, svc, oauth.Token{}, oauth.Challenge{Kind: oauth.NeedsAuthorization, Status: 401})
	if err != nil || !strings.HasPrefix(tok.AccessToken, "svc-access-") {
		t.Fatalf("Authorize = %v, %v", tok, err)
	}
	stored, ok := st.token("", "(service)", "tracker")
	if !ok || stored.AccessToken != tok.AccessToken {
		t.Fatalf("stored = %v", stored)
	}
	stored.Expiry = time.Now().Add(-time.Minute)
	st.PutToken(ctx, "", "(service)", "tracker", "", stored)
	again, err := r.Token(ctx, s, svc)
	if err != nil || again.AccessToken == "" || again.AccessToken == tok.AccessToken {
		t.Fatalf("Token after expiry = %v, %v", again, err)
	}

	s.OAuth = mcp.OAuthSettings{}
	st.Delete(ctx, "", "(service)", "tracker")
	var nc *NeedsConnection
	if _, err := r.Authorize(ctx, s, svc, oauth.Token{}, oauth.Challenge{Kind: oauth.NeedsAuthorization, Status: 401}); !errors.As(err, &nc) || nc.Who != svc {
		t.Fatalf("service without a secret = %v", err)
	}
	noSecret(t, "the log", log.String(), svcSecret, tok.AccessToken, again.AccessToken)
}
