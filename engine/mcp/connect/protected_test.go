package connect

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine/mcp"
	"agentbot/engine/mcp/connect/protectedtest"
	"agentbot/engine/mcp/oauth"
)

// These tests run the Connector against a real protected MCP server
// (protectedtest: the TypeScript SDK's server and bearer-auth middleware,
// with oidc-provider as its authorization server), and talk MCP to it
// through the go-sdk's client with the Connector's tokens.

var (
	alice = mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: "UALICE"}
	bob   = mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: "UBOB"}
)

// protectedServer is srv as the MCP config names it (its Entry), identity
// user.
func protectedServer(t *testing.T, srv *protectedtest.Server) *mcp.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(path, []byte("servers:\n"+srv.Entry("tracker", "    timeout: 20s\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, probs, err := mcp.LoadConfig(path, func(string) string { return "" })
	if err != nil || len(probs) != 0 {
		t.Fatalf("the config of the protected server: %v %v", err, probs)
	}
	s, ok := cfg.Server("tracker")
	if !ok || s.URL != srv.URL || mcp.IdentityOf(s) != mcp.IdentityUser || s.Timeout != 20*time.Second {
		t.Fatalf("the protected server's config = %+v", s)
	}
	return s
}

// post sends an MCP initialize request to the server with token (none
// when ""), in session (none when ""), and returns the answer's status
// and challenge.
func post(t *testing.T, s *mcp.Server, token, session string) (int, oauth.Challenge) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	if session != "" {
		body = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	}
	req, err := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, oauth.Classify(resp)
}

// connectAs connects who as account, as the person would: the server's
// 401 to a request without a token goes to Authorize, which asks who to
// connect; ConnectURL's link, opened in account's browser, ends at the
// replica's callback page, which says connected. It returns the stored
// token.
func connectAs(t *testing.T, r *replica, st *memStore, s *mcp.Server, who mcp.Identity, account string) oauth.Token {
	t.Helper()
	ctx := context.Background()
	status, ch := post(t, s, "", "")
	if status != http.StatusUnauthorized || ch.Kind != oauth.NeedsAuthorization {
		t.Fatalf("a request without a token = %d %+v", status, ch)
	}
	_, err := r.Authorize(ctx, s, who, oauth.Token{}, ch)
	var nc *NeedsConnection
	if !errors.As(err, &nc) || nc.Who != who || nc.Server != s.Name {
		t.Fatalf("Authorize for %s = %v", who, err)
	}
	authURL, err := r.ConnectURL(ctx, s, who)
	if err != nil {
		t.Fatal(err)
	}
	code, page := protectedtest.Browse(t, authURL, account)
	if code != http.StatusOK || !strings.Contains(page, "Connected") {
		t.Fatalf("the callback page for %s = %d %s", account, code, page)
	}
	select {
	case got := <-r.connected:
		if got != who.Team+"/"+who.User+"/"+s.Name {
			t.Fatalf("OnConnected = %s", got)
		}
	default:
		t.Fatal("OnConnected was not called")
	}
	tok, ok := st.token(who.Team, who.User, s.Name)
	if !ok || tok.AccessToken == "" || tok.RefreshToken == "" || tok.Resource != s.URL {
		t.Fatalf("the stored token of %s = %v", who, tok)
	}
	return tok
}

// tokens records the tokens a session was handed.
type tokens struct {
	mu   sync.Mutex
	seen []string
}

func (k *tokens) all() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.seen)
}

func (k *tokens) fingerprints() []string {
	var out []string
	for _, s := range k.all() {
		out = append(out, protectedtest.Fingerprint(s))
	}
	return out
}

// open opens an MCP session acting as who: the go-sdk's client over
// oauth.Transport, whose token is the Connector's (refreshed by it). It is
// closed when until ends.
func open(t, until *testing.T, r *replica, s *mcp.Server, who mcp.Identity) (*sdk.ClientSession, *tokens) {
	t.Helper()
	k := &tokens{}
	tr := &oauth.Transport{Resource: s.URL, Token: func(ctx context.Context) (oauth.Token, error) {
		tok, err := r.Token(ctx, s, who)
		k.mu.Lock()
		k.seen = append(k.seen, tok.AccessToken)
		k.mu.Unlock()
		return tok, err
	}}
	c := sdk.NewClient(&sdk.Implementation{Name: "agentbot-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: tr}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to the protected server as %s: %v", who, err)
	}
	until.Cleanup(func() { cs.Close() })
	return cs, k
}

// whoami calls the whoami tool and returns the subject it answers.
func whoami(t *testing.T, cs *sdk.ClientSession) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami"})
	if err != nil || res.IsError {
		t.Fatalf("whoami = %+v, %v", res, err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	sub, _ := out["subject"].(string)
	return sub
}

// lastCall is the server's last tool call.
func lastCall(t *testing.T, srv *protectedtest.Server) protectedtest.Call {
	t.Helper()
	calls := srv.Calls()
	if len(calls) == 0 {
		t.Fatal("the server saw no tool call")
	}
	return calls[len(calls)-1]
}

// refused reports whether the server refused a request carrying the
// token of fingerprint fp with status.
func refused(srv *protectedtest.Server, fp string, status int) bool {
	return slices.ContainsFunc(srv.Refusals(), func(r protectedtest.Refusal) bool { return r.Fingerprint == fp && r.Status == status })
}

// Two people connect their own accounts at a real protected server, and
// each call acts as its person: the server's 401 names its metadata, the
// Connector asks each to connect, their browsers log in as them, the
// callback stores their tokens, and the server sees alice's calls as
// alice and bob's as bob, in sessions bound to them. Revoking alice's
// token makes the server refuse it at once, and asks her to connect
// again; bob is unaffected.
func TestProtectedServer(t *testing.T) {
	ctx := context.Background()
	srv := protectedtest.Start(t)
	st := newMemStore()
	log := &lockedBuffer{}
	r := newReplica(t, st, "", log)
	s := protectedServer(t, srv)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("connector log:\n%s", log)
		}
	})

	if !t.Run("unauthorized", func(t *testing.T) {
		status, ch := post(t, s, "", "")
		if status != http.StatusUnauthorized || ch.Kind != oauth.NeedsAuthorization || ch.ResourceMetadata != srv.ResourceMetadataURL {
			t.Fatalf("no token: %d %+v", status, ch)
		}
		d, err := oauth.Discover(ctx, http.DefaultClient, s.URL, ch.WWWAuthenticate)
		if err != nil || d.Resource != srv.URL || d.AuthServer.Issuer != srv.Issuer || d.AuthServer.RegistrationEndpoint == "" ||
			!slices.Equal(d.Scopes, []string{"mcp:read", "mcp:write"}) {
			t.Fatalf("discovery = %+v, %v", d, err)
		}
		if status, _ := post(t, s, "not-a-token", ""); status != http.StatusUnauthorized || !refused(srv, protectedtest.Fingerprint("not-a-token"), 401) {
			t.Fatalf("a made-up token: %d, refusals %+v", status, srv.Refusals())
		}
	}) {
		return
	}

	top := t
	var aliceTok, bobTok oauth.Token
	var aliceSession *sdk.ClientSession
	if !t.Run("alice connects and acts as alice", func(t *testing.T) {
		aliceTok = connectAs(t, r, st, s, alice, "alice")
		aliceSession, _ = open(t, top, r, s, alice)
		if got := whoami(t, aliceSession); got != "alice" {
			t.Fatalf("whoami = %q", got)
		}
		res, err := aliceSession.CallTool(ctx, &sdk.CallToolParams{Name: "create_issue", Arguments: map[string]any{"title": "a bug"}})
		if err != nil || res.IsError || len(res.Content) != 1 {
			t.Fatalf("create_issue = %+v, %v", res, err)
		}
		if text := res.Content[0].(*sdk.TextContent).Text; !strings.HasPrefix(text, "created issue ") || !strings.HasSuffix(text, " as alice") {
			t.Fatalf("create_issue answered %q", text)
		}
		c := lastCall(t, srv)
		if c.Tool != "create_issue" || c.Subject != "alice" || c.Fingerprint != protectedtest.Fingerprint(aliceTok.AccessToken) ||
			c.Session != aliceSession.ID() || c.Arguments["title"] != "a bug" || !slices.Contains(c.Scopes, "mcp:read") {
			t.Fatalf("the server saw %+v", c)
		}
	}) {
		return
	}

	if !t.Run("bob connects and acts as bob, not alice", func(t *testing.T) {
		if tok, err := r.Token(ctx, s, bob); err != nil || tok.AccessToken != "" {
			t.Fatalf("bob's token before he connects = %v, %v", tok, err)
		}
		bobTok = connectAs(t, r, st, s, bob, "bob")
		if bobTok.AccessToken == aliceTok.AccessToken {
			t.Fatal("bob got alice's token")
		}
		cs, _ := open(t, t, r, s, bob)
		if got := whoami(t, cs); got != "bob" {
			t.Fatalf("whoami = %q", got)
		}
		if c := lastCall(t, srv); c.Subject != "bob" || c.Fingerprint != protectedtest.Fingerprint(bobTok.AccessToken) || c.Session == aliceSession.ID() {
			t.Fatalf("the server saw %+v", c)
		}
		// The server binds a session to its subject: bob's token in
		// alice's session is refused.
		if status, _ := post(t, s, bobTok.AccessToken, aliceSession.ID()); status != http.StatusForbidden ||
			!refused(srv, protectedtest.Fingerprint(bobTok.AccessToken), 403) {
			t.Fatalf("bob's token in alice's session = %d", status)
		}
		for _, c := range srv.Calls() {
			if c.Subject == "bob" && c.Fingerprint == protectedtest.Fingerprint(aliceTok.AccessToken) ||
				c.Subject == "alice" && c.Fingerprint != protectedtest.Fingerprint(aliceTok.AccessToken) {
				t.Fatalf("a call with a token not its person's: %+v", c)
			}
		}
	}) {
		return
	}

	if !t.Run("a redirect serves once, a forged state is refused", func(t *testing.T) {
		carol := mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: "UCAROL"}
		authURL, err := r.ConnectURL(ctx, s, carol)
		if err != nil {
			t.Fatal(err)
		}
		back := protectedtest.BrowseTo(t, authURL, "carol")
		if got := back.Scheme + "://" + back.Host + back.Path; got != r.PublicURL+CallbackPath || back.Query().Get("code") == "" ||
			back.Query().Get("iss") != srv.Issuer {
			t.Fatalf("the redirect to the client = %s", back.Redacted())
		}
		forged := *back
		q := forged.Query()
		q.Set("state", "forged-state")
		forged.RawQuery = q.Encode()
		if code, page := callback(t, r, &forged); code != http.StatusBadRequest || strings.Contains(page, "Connected") {
			t.Fatalf("a forged state: %d %s", code, page)
		}
		if code, page := callback(t, r, back); code != http.StatusOK || !strings.Contains(page, "Connected") {
			t.Fatalf("the genuine redirect: %d %s", code, page)
		}
		select {
		case <-r.connected:
		default:
			t.Fatal("OnConnected was not called")
		}
		if code, _ := callback(t, r, back); code != http.StatusBadRequest {
			t.Fatalf("the redirect replayed: %d", code)
		}
		cs, _ := open(t, t, r, s, carol)
		if got := whoami(t, cs); got != "carol" {
			t.Fatalf("whoami = %q", got)
		}
	}) {
		return
	}

	if !t.Run("a service identity by client credentials", func(t *testing.T) {
		svc := *s
		svc.Identity = mcp.IdentityService
		svc.OAuth = mcp.OAuthSettings{ClientID: protectedtest.ServiceClientID, ClientSecret: protectedtest.ServiceClientSecret}
		who := mcp.Identity{Kind: mcp.IdentityService, Team: "T1"}
		_, ch := post(t, &svc, "", "")
		tok, err := r.Authorize(ctx, &svc, who, oauth.Token{}, ch)
		if err != nil || tok.AccessToken == "" || tok.RefreshToken != "" {
			t.Fatalf("Authorize for the service identity = %v, %v", tok, err)
		}
		cs, _ := open(t, t, r, &svc, who)
		if got := whoami(t, cs); got != "client:"+protectedtest.ServiceClientID {
			t.Fatalf("whoami = %q", got)
		}
	}) {
		return
	}

	t.Run("alice's token revoked", func(t *testing.T) {
		cl, err := st.Client(ctx, s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := oauth.Revoke(ctx, http.DefaultClient, cl, aliceTok); err != nil {
			t.Fatal(err)
		}
		status, ch := post(t, s, aliceTok.AccessToken, "")
		if status != http.StatusUnauthorized || ch.Kind != oauth.NeedsAuthorization || !refused(srv, protectedtest.Fingerprint(aliceTok.AccessToken), 401) {
			t.Fatalf("alice's revoked token: %d %+v", status, ch)
		}
		if _, err := aliceSession.CallTool(ctx, &sdk.CallToolParams{Name: "whoami"}); err == nil {
			t.Fatal("alice's session still calls with a revoked token")
		}
		// The server's 401 to the revoked token: the refresh token is
		// dead too, so alice is asked to connect again.
		_, err = r.Authorize(ctx, s, alice, aliceTok, ch)
		var nc *NeedsConnection
		if !errors.As(err, &nc) || nc.Who != alice {
			t.Fatalf("Authorize after the revocation = %v", err)
		}
		if tok, ok := st.token(alice.Team, alice.User, s.Name); ok {
			t.Fatalf("alice's revoked token is still stored: %v", tok)
		}
		cs, _ := open(t, t, r, s, bob)
		if got := whoami(t, cs); got != "bob" {
			t.Fatalf("bob after alice's revocation: whoami = %q", got)
		}
	})
}

// With access tokens of two seconds, a session's token expires at the
// server mid-session and the Connector refreshes it: the next call in
// the same session carries a new token of the same person; the server's
// 401 to the expired token is answered by Authorize with a refreshed one.
func TestProtectedServerRefresh(t *testing.T) {
	ctx := context.Background()
	srv := protectedtest.StartWith(t, protectedtest.Options{AccessTTL: 2 * time.Second})
	st := newMemStore()
	log := &lockedBuffer{}
	r := newReplica(t, st, "", log)
	s := protectedServer(t, srv)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("connector log:\n%s", log)
		}
	})

	first := connectAs(t, r, st, s, alice, "alice")
	if time.Until(first.Expiry) > 3*time.Second {
		t.Fatalf("the token expires at %s, not in two seconds", first.Expiry)
	}
	cs, k := open(t, t, r, s, alice)
	if got := whoami(t, cs); got != "alice" {
		t.Fatalf("whoami = %q", got)
	}
	before := lastCall(t, srv)

	// Wait (bounded) for the server to refuse the token of that call.
	used := ""
	for _, tok := range k.all() {
		if protectedtest.Fingerprint(tok) == before.Fingerprint {
			used = tok
		}
	}
	if used == "" {
		t.Fatalf("the call's token %s is none the session was given (%v)", before.Fingerprint, k.fingerprints())
	}
	var ch oauth.Challenge
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var status int
		if status, ch = post(t, s, used, ""); status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server still accepts a two-second token after ten seconds")
		}
	}

	if got := whoami(t, cs); got != "alice" {
		t.Fatalf("whoami after the expiry = %q", got)
	}
	after := lastCall(t, srv)
	if after.Subject != "alice" || after.Session != before.Session || after.Fingerprint == before.Fingerprint ||
		!slices.Contains(k.fingerprints(), after.Fingerprint) {
		t.Fatalf("after the expiry the server saw %+v (before: %+v)", after, before)
	}
	cur, ok := st.token(alice.Team, alice.User, s.Name)
	if !ok || cur.RefreshToken == "" || cur.ClientID != first.ClientID {
		t.Fatalf("the stored token after refreshes = %v", cur)
	}

	// The expired token's 401, answered: a refreshed token of alice's.
	n, err := r.Authorize(ctx, s, alice, oauth.Token{AccessToken: used, Resource: s.URL}, ch)
	if err != nil || n.AccessToken == "" || n.AccessToken == used {
		t.Fatalf("Authorize for the expired token = %v, %v", n, err)
	}
	if status, _ := post(t, s, n.AccessToken, ""); status != http.StatusOK {
		t.Fatalf("the refreshed token: %d", status)
	}
}
