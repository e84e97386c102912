package bot_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/cmd/agentbot/admin"
	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// fakeConnections is bot.Connections in memory: it records what was
// revoked and deleted.
type fakeConnections struct {
	mu      sync.Mutex
	list    []storage.CredentialInfo
	revoked []string
	fail    error // Revoke's error
}

func (f *fakeConnections) List(_ context.Context, flt storage.CredentialFilter) ([]storage.CredentialInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []storage.CredentialInfo
	for _, c := range f.list {
		if flt.Match(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeConnections) Revoke(_ context.Context, team, user, server string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, team+"/"+user+"/"+server)
	return f.fail
}

func (f *fakeConnections) Delete(_ context.Context, team, user, server string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.list = slices.DeleteFunc(f.list, func(c storage.CredentialInfo) bool {
		return c.Team == team && c.User == user && c.Server == server
	})
	return nil
}

// revokedKeys are the keys Revoke was called with.
func (f *fakeConnections) revokedKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.revoked)
}

func (f *fakeConnections) has(team, user, server string) bool {
	l, _ := f.List(context.Background(), storage.CredentialFilter{Team: team, User: user, Server: server})
	return len(l) > 0
}

// /agent connections shows a person their own connections only, and an
// admin the service identities too (never another team's); /agent
// disconnect revokes and forgets only the caller's own connection, and
// with --service, for an admin only, their team's service identity.
func TestSlashConnections(t *testing.T) {
	const alice, bob, admin = "U0ALICE", "U0BOB", "U0ADMIN"
	exp := time.Now().Add(time.Hour)
	conns := &fakeConnections{}
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		c.Connections = conns
		c.Admins = []string{admin}
	}})
	team := r.slack.TeamID()
	conns.mu.Lock()
	conns.list = []storage.CredentialInfo{
		{Team: team, User: alice, Server: "github", Account: "alice-gh", Scopes: []string{"repo", "read:org"}, Expiry: exp},
		{Team: team, User: alice, Server: "linear", Account: "alice@example.com"},
		{Team: team, User: bob, Server: "github", Account: "bob-gh", Scopes: []string{"repo"}},
		{Team: team, User: storage.ServiceUser, Server: "sentry", Scopes: []string{"org:read"}},
		{Team: "T0OTHER", User: storage.ServiceUser, Server: "notion"},
		{Team: "T0OTHER", User: alice, Server: "jira"},
	}
	conns.mu.Unlock()

	got := r.slash(alice, channel, "connections")
	for _, s := range []string{"`github` as alice-gh", "repo, read:org", "expires " + exp.UTC().Format("2006-01-02 15:04 UTC"), "`linear` as alice@example.com", "/agent disconnect"} {
		has(t, got, s, "Alice's /agent connections")
	}
	for _, s := range []string{"bob-gh", "sentry", "notion", "jira", "Service identities"} {
		hasNot(t, got, s, "Alice's /agent connections")
	}
	adm := r.slash(admin, channel, "connections")
	has(t, adm, "You have no connections", "the admin's own connections")
	has(t, adm, "*Service identities*", "an admin's /agent connections")
	has(t, adm, "`sentry` — scopes org:read", "an admin's /agent connections")
	hasNot(t, adm, "notion", "an admin's /agent connections shows another team's service identity")
	hasNot(t, adm, "alice-gh", "an admin's /agent connections shows a person's connection")

	// Bob cannot end Alice's linear connection: /agent disconnect only
	// ever ends the caller's own.
	has(t, r.slash(bob, channel, "disconnect linear"), "You have no connection to `linear`", "Bob disconnecting Alice's server")
	if !conns.has(team, alice, "linear") || len(conns.revokedKeys()) != 0 {
		t.Fatalf("Bob's disconnect touched Alice's: revoked %v", conns.revokedKeys())
	}
	got = r.slash(bob, channel, "disconnect github")
	has(t, got, "Disconnected from `github`", "Bob's disconnect")
	has(t, got, "The server revoked it too", "Bob's disconnect")
	if !slices.Equal(conns.revokedKeys(), []string{team + "/" + bob + "/github"}) || conns.has(team, bob, "github") || !conns.has(team, alice, "github") {
		t.Fatalf("after Bob's disconnect: revoked %v", conns.revokedKeys())
	}

	// A revocation that fails still forgets the connection, and says so.
	conns.mu.Lock()
	conns.fail = errors.New("oauth: revocation failed")
	conns.mu.Unlock()
	got = r.slash(alice, channel, "disconnect github")
	has(t, got, "Disconnected from `github`", "Alice's disconnect")
	has(t, got, "did not revoke it", "Alice's disconnect with a failing revocation")
	if conns.has(team, alice, "github") || len(conns.revokedKeys()) != 2 {
		t.Fatalf("after Alice's disconnect: revoked %v", conns.revokedKeys())
	}
	has(t, r.slash(alice, channel, "disconnect"), "Which server?", "/agent disconnect without a server")

	// --service: admins only, their team's service identity only.
	has(t, r.slash(alice, channel, "disconnect sentry --service"), "Only workspace admins or the people in AGENTBOT_ADMINS", "a person ending a service identity")
	has(t, r.slash(admin, channel, "disconnect notion --service"), "No service identity is stored for `notion`", "an admin ending another team's service identity")
	if len(conns.revokedKeys()) != 2 || !conns.has("T0OTHER", storage.ServiceUser, "notion") {
		t.Fatalf("a refused --service disconnect revoked: %v", conns.revokedKeys())
	}
	has(t, r.slash(admin, channel, "disconnect sentry --service"), "Ended the service identity at `sentry`", "an admin ending a service identity")
	if k := conns.revokedKeys(); len(k) != 3 || k[2] != team+"/"+storage.ServiceUser+"/sentry" || conns.has(team, storage.ServiceUser, "sentry") {
		t.Fatalf("after ending the service identity: revoked %v", k)
	}
	if n := r.publicPosts(); n != 0 {
		t.Fatalf("/agent connections posted %d public messages", n)
	}
}

// Without Config.Connections, /agent connections and disconnect say they
// are off.
func TestSlashConnectionsDisabled(t *testing.T) {
	r := newRig(t, rigOpts{})
	has(t, r.slash(user, channel, "connections"), "not enabled here", "/agent connections without Connections")
	has(t, r.slash(user, channel, "disconnect github"), "not enabled here", "/agent disconnect without Connections")
	r.slack.AddUser(slack.User{ID: "U0WSADMIN", IsAdmin: true})
	has(t, r.slash("U0WSADMIN", channel, "connections"), "not enabled here", "an admin's /agent connections without Connections")
}

// /agent disconnect through the real Vault over the rig's bbolt store
// (admin.VaultConnections, as serve wires it): the person's token is
// revoked at the authorization server with the stored client and
// deleted; another person's stays, and no answer shows a token.
func TestSlashDisconnectVault(t *testing.T) {
	const alice, bob = "U0ALICE", "U0BOB"
	ctx := context.Background()
	var mu sync.Mutex
	var revoked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		revoked = append(revoked, r.PostForm.Get("token"))
		mu.Unlock()
	}))
	defer srv.Close()
	raw := make([]byte, secretbox.KeySize)
	rand.Read(raw)
	key, err := secretbox.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secretbox.NewKeyring(key)
	if err != nil {
		t.Fatal(err)
	}
	var vault *credentials.Vault
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		v, err := credentials.New(c.Store.(storage.Credentials), kr, nil)
		if err != nil {
			t.Fatal(err)
		}
		vault = v
		c.Connections = admin.VaultConnections{Vault: v, HTTP: srv.Client()}
	}})
	team := r.slack.TeamID()
	for _, who := range []string{alice, bob} {
		tok := oauth.Token{AccessToken: "access-of-" + who, RefreshToken: "refresh-of-" + who, Scopes: []string{"repo"}}
		if err := vault.PutToken(ctx, team, who, "github", who+"-gh", tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := vault.PutClient(ctx, "github", oauth.Client{ID: "agentbot", AuthMethod: oauth.AuthNone, RevocationURL: srv.URL + "/revoke"}); err != nil {
		t.Fatal(err)
	}

	got := r.slash(alice, channel, "connections")
	has(t, got, "`github` as U0ALICE-gh", "Alice's /agent connections")
	hasNot(t, got, "U0BOB-gh", "Alice's /agent connections")
	got = r.slash(alice, channel, "disconnect github")
	has(t, got, "The server revoked it too", "Alice's disconnect")
	mu.Lock()
	if !slices.Equal(revoked, []string{"refresh-of-" + alice, "access-of-" + alice}) {
		t.Fatalf("revoked %q, want Alice's refresh then access token", revoked)
	}
	mu.Unlock()
	if _, err := vault.Token(ctx, team, alice, "github"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Alice's token after disconnect: %v", err)
	}
	if tok, err := vault.Token(ctx, team, bob, "github"); err != nil || tok.AccessToken != "access-of-"+bob {
		t.Fatalf("Bob's token after Alice's disconnect: %v", err)
	}
	for _, m := range r.slack.Messages() {
		for _, s := range []string{"access-of-", "refresh-of-"} {
			hasNot(t, m.Text, s, "a message")
		}
	}
}

// The Home tab lists the person's own connections, each with a Disconnect
// button; a click revokes and forgets that connection (the person's own,
// in their team) and the tab shows it gone. Another person's Home tab
// never lists hers.
func TestHomeTabConnections(t *testing.T) {
	const alice, bob = "U0ALICE", "U0BOB"
	conns := &fakeConnections{}
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.Connections = conns }})
	team := r.slack.TeamID()
	conns.mu.Lock()
	conns.list = []storage.CredentialInfo{
		{Team: team, User: alice, Server: "github", Account: "alice-gh", Scopes: []string{"repo"}},
		{Team: team, User: alice, Server: "linear"},
		{Team: team, User: bob, Server: "github", Account: "bob-gh"},
	}
	conns.mu.Unlock()

	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": alice, "tab": "home"})
	r.waitFor("alice's home tab", func() bool { return strings.Contains(lastHome(r, alice), "alice-gh") })
	home := lastHome(r, alice)
	for _, want := range []string{"Your connections", "`github` as alice-gh", "`linear`", `"disconnect:`} {
		has(t, home, want, "alice's home tab")
	}
	hasNot(t, home, "bob-gh", "alice's home tab")

	var action, value string
	var view struct {
		View struct {
			Blocks []struct {
				Accessory *struct {
					ActionID string `json:"action_id"`
					Value    string `json:"value"`
				} `json:"accessory"`
			} `json:"blocks"`
		} `json:"view"`
	}
	if err := json.Unmarshal([]byte(home), &view); err != nil {
		t.Fatalf("home view: %v", err)
	}
	for _, b := range view.View.Blocks {
		if b.Accessory != nil && strings.HasPrefix(b.Accessory.ActionID, "disconnect:") && b.Accessory.Value == "github" {
			action, value = b.Accessory.ActionID, b.Accessory.Value
		}
	}
	if action == "" {
		t.Fatalf("no Disconnect button for github in:\n%s", home)
	}
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: alice, ActionID: action, Value: value})
	r.waitFor("the home tab without github", func() bool {
		h := lastHome(r, alice)
		return !strings.Contains(h, "alice-gh") && strings.Contains(h, "`linear`")
	})
	if !slices.Equal(conns.revokedKeys(), []string{team + "/" + alice + "/github"}) || conns.has(team, alice, "github") || !conns.has(team, bob, "github") {
		t.Fatalf("after alice's click: revoked %v", conns.revokedKeys())
	}
}
