package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// revocations is an RFC 7009 revocation endpoint that records the tokens
// it is asked to revoke and refuses those starting with "fail-".
type revocations struct {
	mu     sync.Mutex
	tokens []string
}

func (rv *revocations) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	tok := r.PostForm.Get("token")
	rv.mu.Lock()
	rv.tokens = append(rv.tokens, tok)
	rv.mu.Unlock()
	if strings.HasPrefix(tok, "fail-") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"temporarily_unavailable"}`))
	}
}

func (rv *revocations) got() []string {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return slices.Clone(rv.tokens)
}

// seedConnections stores, sealed under key in the bbolt store of data:
// U1's and U2's github connections (U2's revocation fails), a service
// identity at sentry, and agentbot's client at github, whose revocation
// endpoint is rev.
func seedConnections(t *testing.T, data string, key secretbox.Key, rev string) {
	t.Helper()
	ctx := context.Background()
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kr, err := secretbox.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	v, err := credentials.New(st, kr, nil)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
	for _, c := range []struct {
		user, server, account string
		tok                   oauth.Token
	}{
		{"U1", "github", "octocat", oauth.Token{AccessToken: cmdAccess, RefreshToken: cmdRefresh, Scopes: []string{"repo", "read:org"}, Expiry: exp}},
		{"U2", "github", "hubot", oauth.Token{AccessToken: "fail-u2-access", Scopes: []string{"repo"}}},
		{storage.ServiceUser, "sentry", "", oauth.Token{AccessToken: "cmd-service-access", Scopes: []string{"org:read"}}},
	} {
		if err := v.PutToken(ctx, "T1", c.user, c.server, c.account, c.tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.PutClient(ctx, "github", oauth.Client{ID: "agentbot", Secret: "cmd-client-secret", AuthMethod: oauth.AuthClientSecretBasic,
		RevocationURL: rev}); err != nil {
		t.Fatal(err)
	}
}

// agentbot connections list shows every connection without a secret and
// without the key, filtered by --team, --user and --server, also through
// a running agentbot's control socket; revoke
// revokes at the authorization server with the stored client and deletes,
// deletes also when the server offers no revocation or refuses it, and
// needs the key and the store to itself.
func TestConnectionsListRevoke(t *testing.T) {
	rv := &revocations{}
	srv := httptest.NewServer(rv)
	defer srv.Close()
	data := filepath.Join(t.TempDir(), "data")
	keyText, key := secretKey(t)
	seedConnections(t, data, key, srv.URL+"/revoke")
	vars := map[string]string{"AGENTBOT_DATA": data}
	secrets := []string{cmdAccess, cmdRefresh, "fail-u2-access", "cmd-service-access", "cmd-client-secret", keyText}

	r := runCmd(t, vars, "", "connections", "list")
	r.wantCode(t, 0)
	for _, s := range []string{"TEAM", "SCOPES", "EXPIRES", "UPDATED", "octocat", "repo read:org", "2030-01-02 03:04Z", "hubot", "(service)", "sentry", "org:read"} {
		contains(t, "list", r.stdout, s)
	}
	lacks(t, "list", r.stdout, "(client)")
	for _, s := range secrets {
		lacks(t, "list", r.stdout+r.stderr, s)
	}
	r = runCmd(t, vars, "", "connections", "list", "--user", "U1")
	r.wantCode(t, 0)
	contains(t, "list --user U1", r.stdout, "octocat")
	lacks(t, "list --user U1", r.stdout, "hubot")
	r = runCmd(t, vars, "", "connections", "list", "--server", "sentry", "--team", "T1")
	contains(t, "list --server sentry", r.stdout, "(service)")
	lacks(t, "list --server sentry", r.stdout, "octocat")
	r = runCmd(t, vars, "", "connections", "list", "--team", "T2")
	lacks(t, "list --team T2", r.stdout, "octocat")
	r = runCmd(t, vars, "", "connections", "list", "--user", "(client)")
	contains(t, "list --user (client)", r.stdout, "(client)")

	r = runCmd(t, vars, "", "connections", "revoke", "T1", "U1", "github")
	r.wantCode(t, 2)
	contains(t, "revoke without a key", r.stderr, "AGENTBOT_SECRET_KEY")
	vars["AGENTBOT_SECRET_KEY"] = keyText
	r = runCmd(t, vars, "", "connections", "revoke", "T1", "U1")
	r.wantCode(t, 2)

	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	// Held by a process without a control socket, list cannot read it;
	// with one, list asks it. revoke needs the store to itself.
	r = runCmd(t, vars, "", "connections", "list")
	r.wantCode(t, 1)
	contains(t, "list while held silently", r.stderr, "agentbot connections list:")
	stop, err := st.ServeControl(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, vars, "", "connections", "list", "--user", "U1")
	r.wantCode(t, 0)
	contains(t, "list through the control socket", r.stdout, "octocat")
	lacks(t, "list --user U1 through the control socket", r.stdout, "hubot")
	for _, s := range secrets {
		lacks(t, "list through the control socket", r.stdout+r.stderr, s)
	}
	r = runCmd(t, vars, "", "connections", "revoke", "T1", "U1", "github")
	r.wantCode(t, 1)
	contains(t, "revoke while held", r.stderr, "stop it to revoke connections")
	stop()
	st.Close()
	if len(rv.got()) != 0 {
		t.Fatalf("revoked %q while the store was held", rv.got())
	}

	r = runCmd(t, vars, "", "connections", "revoke", "T1", "U1", "github")
	r.wantCode(t, 0)
	contains(t, "revoke", r.stdout, "revoked T1 U1 github at its authorization server")
	contains(t, "revoke", r.stdout, "deleted connection T1 U1 github")
	if got := rv.got(); !slices.Equal(got, []string{cmdRefresh, cmdAccess}) {
		t.Fatalf("revoked %q, want U1's refresh then access token", got)
	}
	r = runCmd(t, vars, "", "connections", "revoke", "T1", "U1", "github")
	r.wantCode(t, 1)
	contains(t, "revoke again", r.stderr, "no connection T1 U1 github")
	r = runCmd(t, vars, "", "connections", "revoke", "-", "U2", "github")
	r.wantCode(t, 1)
	contains(t, "revoke with another team", r.stderr, "no connection - U2 github")

	// The server refuses: reported, exit 1, deleted all the same.
	r = runCmd(t, vars, "", "connections", "revoke", "T1", "U2", "github")
	r.wantCode(t, 1)
	contains(t, "failed revoke", r.stderr, "revoking at the server failed")
	contains(t, "failed revoke", r.stdout, "deleted connection T1 U2 github")
	// No client is stored for sentry: not revoked there, deleted.
	r = runCmd(t, vars, "", "connections", "revoke", "T1", "(service)", "sentry")
	r.wantCode(t, 0)
	contains(t, "revoke without a client", r.stdout, "not revoked at the server")
	contains(t, "revoke without a client", r.stdout, "deleted connection T1 (service) sentry")
	for _, s := range secrets {
		lacks(t, "revoke", r.stdout+r.stderr, s)
	}

	r = runCmd(t, vars, "", "connections", "list")
	r.wantCode(t, 0)
	for _, s := range []string{"octocat", "hubot", "sentry"} {
		lacks(t, "list after revoking", r.stdout, s)
	}
}
