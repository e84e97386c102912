package connect

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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/mcp"
	"agentbot/engine/mcp/connect/connecttest"
	"agentbot/engine/mcp/oauth"
)

// errNotFound is what the test stores answer for a missing record.
var errNotFound = ErrNotFound

// memStore is the Store in memory, shared by the Connectors of a test as
// replicas share a database.
type memStore = MemoryStore

func newMemStore() *memStore { return NewMemoryStore() }

func (m *memStore) token(team, user, server string) (oauth.Token, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tokens[tkey(team, user, server)]
	return t, ok
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
		OnConnected: func(c Connected) { r.connected <- c.Team + "/" + c.User + "/" + c.Server },
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

// newWorld is what most tests start from: a provider (without client ID
// metadata documents), a store, the log, one replica over them, and the
// provider's protected server.
func newWorld(t *testing.T) (*connecttest.Provider, *memStore, *lockedBuffer, *replica, *mcp.Server) {
	t.Helper()
	p := connecttest.New(t, false)
	st := newMemStore()
	log := &lockedBuffer{}
	return p, st, log, newReplica(t, st, "", log), server(p)
}

// server is the provider's protected MCP server, identity user.
func server(p *connecttest.Provider) *mcp.Server {
	return &mcp.Server{Name: "tracker", Transport: mcp.TransportHTTP, URL: p.Resource, Identity: mcp.IdentityUser}
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
	p, st, log, r, s := newWorld(t)

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
	back := connecttest.Authorize(t, authURL)
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
	if !ok || stored.AccessToken == "" || stored.RefreshToken == "" || stored.Resource != p.Resource {
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
	p.RevokeAll()
	t2.Expiry = time.Now().Add(-time.Minute)
	st.PutToken(ctx, "T1", "UANN", "tracker", "", t2)
	_, err = r.Token(ctx, s, ann)
	if !errors.As(err, &nc) || nc.Who != ann {
		t.Fatalf("Token after revocation = %v", err)
	}
	if _, ok := st.token("T1", "UANN", "tracker"); ok {
		t.Fatal("a refused token was kept")
	}
	before := len(p.GrantTypes())
	if tok, err := r.Token(ctx, s, ann); err != nil || tok.AccessToken != "" || len(p.GrantTypes()) != before {
		t.Fatalf("Token after the token was deleted = %v, %v (no further refresh)", tok, err)
	}
	if _, err := r.Authorize(ctx, s, ann, oauth.Token{}, ch); !errors.As(err, &nc) {
		t.Fatalf("Authorize after revocation = %v", err)
	}

	noSecret(t, "the log", log.String(), stored.AccessToken, stored.RefreshToken, tok.AccessToken, tok.RefreshToken,
		back.Query().Get("code"), back.Query().Get("state"), connecttest.DynamicClientSecret)
}

// A flow begun on one replica is finished by another over the same
// store; the client ID metadata document is used where the server
// supports it, and served.
func TestConnectAnotherReplica(t *testing.T) {
	ctx := context.Background()
	p := connecttest.New(t, true)
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
	back := connecttest.Authorize(t, authURL)
	if code, page := callback(t, b, back); code != http.StatusOK {
		t.Fatalf("callback on the other replica = %d %s", code, page)
	}
	tok, err := a.Token(ctx, s, ann)
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("Token on the first replica = %v, %v", tok, err)
	}
	if p.Registrations() != 0 {
		t.Fatalf("%d dynamic registrations, want none", p.Registrations())
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
	p, st, _, r, s := newWorld(t)

	authURL, err := r.ConnectURL(ctx, s, ann)
	if err != nil {
		t.Fatal(err)
	}
	back := connecttest.Authorize(t, authURL)
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
	back = connecttest.Authorize(t, authURL)
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
	_, st, log, r, s := newWorld(t)
	s.Identity = mcp.IdentityService
	s.OAuth = mcp.OAuthSettings{ClientID: connecttest.ServiceClientID, ClientSecret: connecttest.ServiceClientSecret}
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
	noSecret(t, "the log", log.String(), connecttest.ServiceClientSecret, tok.AccessToken, again.AccessToken)
}

// A service identity with a private key instead of a secret is obtained
// with client credentials and private_key_jwt: each request signs a new
// assertion (the provider refuses one seen before), when first asked and
// again when the token expires; the key never reaches the log.
func TestServiceClientCredentialsPrivateKeyJWT(t *testing.T) {
	ctx := context.Background()
	p, st, log, r, s := newWorld(t)
	k, err := oauth.ParseClientKey(p.ServiceKeyPEM, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Identity = mcp.IdentityService
	s.OAuth = mcp.OAuthSettings{ClientID: connecttest.ServiceClientID, ClientKey: k}
	svc := mcp.Identity{Kind: mcp.IdentityService}

	tok, err := r.Authorize(ctx, s, svc, oauth.Token{}, oauth.Challenge{Kind: oauth.NeedsAuthorization, Status: 401})
	if err != nil || !strings.HasPrefix(tok.AccessToken, "svc-access-") || p.Assertions() != 1 {
		t.Fatalf("Authorize = %v, %v (%d assertions)", tok, err, p.Assertions())
	}
	stored, ok := st.token("", "(service)", "tracker")
	if !ok || stored.AccessToken != tok.AccessToken {
		t.Fatalf("stored = %v", stored)
	}
	stored.Expiry = time.Now().Add(-time.Minute)
	st.PutToken(ctx, "", "(service)", "tracker", "", stored)
	again, err := r.Token(ctx, s, svc)
	if err != nil || again.AccessToken == "" || again.AccessToken == tok.AccessToken || p.Assertions() != 2 {
		t.Fatalf("Token after expiry = %v, %v (%d assertions)", again, err, p.Assertions())
	}

	// Another key is refused by the server: an error, not a connect link.
	other := connecttest.New(t, false)
	wrong, err := oauth.ParseClientKey(other.ServiceKeyPEM, "")
	if err != nil {
		t.Fatal(err)
	}
	s.OAuth.ClientKey = wrong
	st.Delete(ctx, "", "(service)", "tracker")
	_, err = r.Authorize(ctx, s, svc, oauth.Token{}, oauth.Challenge{Kind: oauth.NeedsAuthorization, Status: 401})
	var se *oauth.ServerError
	if !errors.As(err, &se) || se.Code != "invalid_client" {
		t.Fatalf("a wrong key = %v", err)
	}
	body := strings.Split(string(p.ServiceKeyPEM), "\n")[1]
	noSecret(t, "the log", log.String(), body, tok.AccessToken, again.AccessToken)
	noSecret(t, "the error", err.Error(), body)
}

// A person connects through a pre-registered client that authenticates
// with private_key_jwt: the code exchange and the refresh each carry a new
// assertion, with the key the client was stored with; a key replaced in
// the config is the one used from then on.
func TestConnectPreregisteredPrivateKeyJWT(t *testing.T) {
	ctx := context.Background()
	p, st, _, r, s := newWorld(t)
	k, err := oauth.ParseClientKey(p.ServiceKeyPEM, "")
	if err != nil {
		t.Fatal(err)
	}
	s.OAuth = mcp.OAuthSettings{ClientID: connecttest.ServiceClientID, ClientKey: k}
	tok := connected(t, r, st, s, ann)
	if p.Assertions() != 1 {
		t.Fatalf("%d assertions after the code exchange, want 1", p.Assertions())
	}
	cl, err := st.Client(ctx, "tracker")
	if err != nil || cl.Registration != oauth.RegistrationPreregistered || cl.AuthMethod != oauth.AuthPrivateKeyJWT || cl.Key == nil {
		t.Fatalf("the stored client = %v, %v", cl, err)
	}

	// The config's key now is another one: the refresh signs with it (and
	// the provider, which knows only the first, refuses it).
	other := connecttest.New(t, false)
	wrong, err := oauth.ParseClientKey(other.ServiceKeyPEM, "")
	if err != nil {
		t.Fatal(err)
	}
	s.OAuth.ClientKey = wrong
	tok.Expiry = time.Now().Add(-time.Minute)
	st.PutToken(ctx, "T1", "UANN", "tracker", "", tok)
	if _, err := r.Token(ctx, s, ann); err == nil || p.Assertions() != 1 {
		t.Fatalf("a refresh with another key = %v (%d assertions)", err, p.Assertions())
	}
	s.OAuth.ClientKey = k
	n, err := r.Token(ctx, s, ann)
	if err != nil || n.AccessToken == "" || n.AccessToken == tok.AccessToken || p.Assertions() != 2 {
		t.Fatalf("refresh = %v, %v (%d assertions)", n, err, p.Assertions())
	}
}

// connected runs a whole flow for who on r, and returns the stored token.
func connected(t *testing.T, r *replica, st *memStore, s *mcp.Server, who mcp.Identity) oauth.Token {
	t.Helper()
	authURL, err := r.ConnectURL(context.Background(), s, who)
	if err != nil {
		t.Fatal(err)
	}
	if code, page := callback(t, r, connecttest.Authorize(t, authURL)); code != http.StatusOK {
		t.Fatalf("callback = %d %s", code, page)
	}
	tok, ok := st.token(who.Team, who.User, s.Name)
	if !ok {
		t.Fatal("no token stored")
	}
	return tok
}

// Requests that find the token expired at once refresh it once: the
// others wait and take the new one (the server rotates refresh tokens, so
// a second refresh would be refused).
func TestConcurrentRefreshOnce(t *testing.T) {
	ctx := context.Background()
	p, st, _, r, s := newWorld(t)
	tok := connected(t, r, st, s, ann)
	tok.Expiry = time.Now().Add(-time.Minute)
	st.PutToken(ctx, "T1", "UANN", "tracker", "", tok)

	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			t, err := r.Token(ctx, s, ann)
			if err == nil {
				got[i] = t.AccessToken
			}
		})
	}
	wg.Wait()
	for _, g := range got {
		if g == "" || g != got[0] || g == tok.AccessToken {
			t.Fatalf("tokens = %q", got)
		}
	}
	refreshes := 0
	for _, g := range p.GrantTypes() {
		if g == "refresh_token" {
			refreshes++
		}
	}
	if refreshes != 1 {
		t.Fatalf("%d refreshes, want 1", refreshes)
	}
}

// A 403 insufficient_scope asks the person to connect again for the union
// of the granted and the challenged scopes, which the connect link asks
// for; the same challenge after those were granted is not asked again.
func TestStepUp(t *testing.T) {
	ctx := context.Background()
	_, st, _, r, s := newWorld(t)
	tok := connected(t, r, st, s, ann)

	ch := oauth.Challenge{Kind: oauth.InsufficientScope, Status: 403, Scopes: []string{"write"},
		WWWAuthenticate: []string{`Bearer error="insufficient_scope", scope="write"`}}
	_, err := r.Authorize(ctx, s, ann, tok, ch)
	var nc *NeedsConnection
	if !errors.As(err, &nc) || !strings.Contains(nc.Reason, "write") {
		t.Fatalf("step-up = %v", err)
	}
	authURL, err := r.ConnectURL(ctx, s, ann)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	if scope := strings.Fields(u.Query().Get("scope")); !slices.Contains(scope, "write") || !slices.Contains(scope, "read") {
		t.Fatalf("step-up asks for %q", u.Query().Get("scope"))
	}

	// Granted (the stub grants read offline_access; pretend it granted
	// write too): the same challenge is refused, not asked again.
	tok.Scopes = []string{"offline_access", "read", "write"}
	st.PutToken(ctx, "T1", "UANN", "tracker", "", tok)
	if _, err := r.Authorize(ctx, s, ann, tok, ch); err == nil || errors.As(err, &nc) {
		t.Fatalf("a step-up for granted scopes = %v, want a refusal without asking", err)
	}
}

// A token the server refuses (a 401 to the request that carried it) is
// deleted when nothing renews it, so every replica asks the person to
// connect again: one without a refresh token at once, one whose refresh
// is refused (a revoked grant) after that refresh.
func TestRefusedTokenDeleted(t *testing.T) {
	ctx := context.Background()
	p, st, _, r, s := newWorld(t)
	ch := oauth.Challenge{Kind: oauth.NeedsAuthorization, Status: 401,
		WWWAuthenticate: []string{`Bearer resource_metadata="` + p.URL + `/.well-known/oauth-protected-resource/mcp"`}}
	var nc *NeedsConnection

	tok := connected(t, r, st, s, ann)
	tok.RefreshToken = ""
	st.PutToken(ctx, "T1", "UANN", "tracker", "", tok)
	if _, err := r.Authorize(ctx, s, ann, tok, ch); !errors.As(err, &nc) {
		t.Fatalf("a refused token without a refresh token = %v", err)
	}
	if _, ok := st.token("T1", "UANN", "tracker"); ok {
		t.Fatal("the refused token was kept")
	}

	tok = connected(t, r, st, s, ann)
	p.RevokeAll()
	if _, err := r.Authorize(ctx, s, ann, tok, ch); !errors.As(err, &nc) {
		t.Fatalf("a refused token whose grant was revoked = %v", err)
	}
	if _, ok := st.token("T1", "UANN", "tracker"); ok {
		t.Fatal("the refused token was kept")
	}

	// A 401 to an older token, after another request stored a new one,
	// keeps the new one.
	tok = connected(t, r, st, s, ann)
	if got, err := r.Authorize(ctx, s, ann, oauth.Token{AccessToken: "older"}, ch); err != nil || got.AccessToken != tok.AccessToken {
		t.Fatalf("a 401 to an older token = %v, %v", got, err)
	}
	if _, ok := st.token("T1", "UANN", "tracker"); !ok {
		t.Fatal("the current token was deleted")
	}
}
