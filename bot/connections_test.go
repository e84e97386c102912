package bot_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot"
	"agentbot/storage"
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

func (f *fakeConnections) has(team, user, server string) bool {
	l, _ := f.List(context.Background(), storage.CredentialFilter{Team: team, User: user, Server: server})
	return len(l) > 0
}

// /agent connections shows a person their own connections only, and an
// admin the service identities too (never another team's); /agent
// disconnect revokes and forgets only the caller's own connection.
func TestSlashConnections(t *testing.T) {
	const alice, bob, admin = "U0ALICE", "U0BOB", "U0ADMIN"
	exp := time.Now().Add(time.Hour)
	conns := &fakeConnections{}
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		c.Connections = conns
		c.Admins = []string{admin}
	}})
	team := r.slack.TeamID()
	conns.list = []storage.CredentialInfo{
		{Team: team, User: alice, Server: "github", Account: "alice-gh", Scopes: []string{"repo", "read:org"}, Expiry: exp},
		{Team: team, User: alice, Server: "linear", Account: "alice@example.com"},
		{Team: team, User: bob, Server: "github", Account: "bob-gh", Scopes: []string{"repo"}},
		{Team: team, User: storage.ServiceUser, Server: "sentry", Scopes: []string{"org:read"}},
		{Team: "T0OTHER", User: storage.ServiceUser, Server: "notion"},
		{Team: "T0OTHER", User: alice, Server: "jira"},
	}

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
	if !conns.has(team, alice, "linear") || len(conns.revoked) != 0 {
		t.Fatalf("Bob's disconnect touched Alice's: revoked %v", conns.revoked)
	}
	got = r.slash(bob, channel, "disconnect github")
	has(t, got, "Disconnected from `github`", "Bob's disconnect")
	has(t, got, "The server revoked it too", "Bob's disconnect")
	if !slices.Equal(conns.revoked, []string{team + "/" + bob + "/github"}) || conns.has(team, bob, "github") || !conns.has(team, alice, "github") {
		t.Fatalf("after Bob's disconnect: revoked %v, list %v", conns.revoked, conns.list)
	}

	// A revocation that fails still forgets the connection, and says so.
	conns.fail = errors.New("oauth: revocation failed")
	got = r.slash(alice, channel, "disconnect github")
	has(t, got, "Disconnected from `github`", "Alice's disconnect")
	has(t, got, "did not revoke it", "Alice's disconnect with a failing revocation")
	if conns.has(team, alice, "github") || len(conns.revoked) != 2 {
		t.Fatalf("after Alice's disconnect: revoked %v, list %v", conns.revoked, conns.list)
	}
	has(t, r.slash(alice, channel, "disconnect"), "Which server?", "/agent disconnect without a server")
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
