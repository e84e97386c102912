package bot_test

import (
	"context"
	"crypto/rand"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/cmd/agentbot/admin"
	"agentbot/cmd/agentbot/mcptools"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/connect"
	"agentbot/engine/mcp/connect/protectedtest"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// MCP authorization end to end (issue 28): a real protected MCP server
// (the TypeScript SDK's, behind its bearer-auth middleware) in front of a
// real OAuth server (oidc-provider), both from npm (protectedtest); the
// bot through the real socketmode client against fakeslack; agentbot's
// own Manager, Connector and credentials vault on the rig's bbolt store;
// two people in one channel. The browser of each person is
// protectedtest.Browse, which logs in as the account it is given.

// authWorld is the MCP side of the rig, made again at each (re)start as a
// process makes it: the vault over the store, the connector, the Manager.
type authWorld struct {
	t   *testing.T
	ps  *protectedtest.Server
	cfg *mcp.Config
	kr  *secretbox.Keyring
	log *syncBuffer // everything logged, at debug level
	pub *httptest.Server
	// handler is what the public side serves now: the current
	// connector's, or another replica's.
	handler atomic.Pointer[http.Handler]
	r       *rig

	mu    sync.Mutex
	vault *credentials.Vault
	conn  *connect.Connector
	mgr   *mcp.Manager
	// secrets are every token, code and client secret seen, none of
	// which may be logged or stored in the clear.
	secrets map[string]bool
}

func newAuthWorld(t *testing.T) *authWorld {
	w := &authWorld{t: t, log: &syncBuffer{}, secrets: map[string]bool{}}
	w.ps = protectedtest.StartWith(t, protectedtest.Options{AccessTTL: 3 * time.Second})
	w.cfg = &mcp.Config{Servers: []mcp.Server{{Name: "tracker", Transport: mcp.TransportHTTP, URL: w.ps.URL,
		Identity: mcp.IdentityUser, Timeout: 20 * time.Second}}}
	raw := make([]byte, secretbox.KeySize)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	key, err := secretbox.NewKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	if w.kr, err = secretbox.NewKeyring(key); err != nil {
		t.Fatal(err)
	}
	w.pub = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { (*w.handler.Load()).ServeHTTP(rw, r) }))
	t.Cleanup(w.pub.Close)
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.mgr != nil {
			_ = w.mgr.Close()
		}
	})
	return w
}

func (w *authWorld) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// connector is a replica's connector over the store's vault; its finished
// flows resume the waiting turns through the bot.
func (w *authWorld) connector(vault *credentials.Vault) *connect.Connector {
	return &connect.Connector{Store: vault, NotFound: storage.ErrNotFound, ServiceUser: storage.ServiceUser,
		PublicURL: w.pub.URL, ClientName: "agentbot e2e", Log: w.logger(),
		OnConnected: func(c connect.Connected) { w.r.bot.AccountConnected(c.Team, c.User, c.Server, c.From) }}
}

// engine makes the process's MCP side over the rig's store.
func (w *authWorld) engine(c *engine.Config) {
	vault, err := credentials.New(c.Store.(storage.Credentials), w.kr, w.logger())
	if err != nil {
		w.t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mgr != nil {
		_ = w.mgr.Close() // the process that stopped
	}
	w.vault, w.conn = vault, w.connector(vault)
	h := w.conn.Handler()
	w.handler.Store(&h)
	w.mgr = mcp.NewManager(w.cfg, mcp.Options{Logger: w.logger(), Authorizer: w.conn, ListBudget: time.Minute, AskPeople: true})
	c.ExternalTools = w.mgr.SessionTools(func(*engine.Session) []string { return []string{"tracker"} },
		func(s *engine.Session) mcp.Identity {
			team, user := bot.SessionPerson(s)
			return mcp.Identity{Kind: mcp.IdentityUser, Team: team, User: user}
		})
	c.Logger = w.logger()
}

// bot gives the bot the connect links, the connections and the logger.
func (w *authWorld) bot(c *bot.Config) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c.Linker = mcptools.Linker{Connector: w.conn, Config: w.cfg}
	c.Connections = admin.VaultConnections{Vault: w.vault}
	c.MCPServers = []string{"tracker"}
	c.Logger = w.logger()
	c.ApprovalTimeout = time.Minute
}

// note records the tokens a person holds now and the client's secret.
func (w *authWorld) note(team, user string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ctx := context.Background()
	if tok, err := w.vault.Token(ctx, team, user, "tracker"); err == nil {
		w.secrets[tok.AccessToken], w.secrets[tok.RefreshToken] = true, true
	}
	if cl, err := w.vault.Client(ctx, "tracker"); err == nil && cl.Secret != "" {
		w.secrets[cl.Secret] = true
	}
	delete(w.secrets, "")
}

// linkRE finds a connect link in a message's blocks.
var linkRE = regexp.MustCompile(`"url":"(http[^"]+)"`)

// link is the connect link of the latest ephemeral message with one that
// who got, waiting for their n-th.
func (r *rig) link(who string, n int) string {
	r.t.Helper()
	var m fakeslack.Message
	r.waitFor("connect link "+who, func() bool {
		l := r.linkMessages(who)
		if len(l) >= n {
			m = l[n-1]
			return true
		}
		return false
	})
	raw := linkRE.FindStringSubmatch(string(m.Blocks))[1]
	return strings.NewReplacer(`\u0026`, "&", `\/`, "/").Replace(raw)
}

// linkMessages are who's ephemeral messages with a connect link.
func (r *rig) linkMessages(who string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.ephemerals(who) {
		if linkRE.Match(m.Blocks) {
			out = append(out, m)
		}
	}
	return out
}

// browse finishes a connect link as account's browser, and checks that
// the page says connected.
func (w *authWorld) browse(link, account string) {
	w.t.Helper()
	status, page := protectedtest.Browse(w.t, link, account)
	if status != http.StatusOK || !strings.Contains(page, "Connected") {
		w.t.Fatalf("%s's connection: %d %s", account, status, page)
	}
}

// lastCall is the server's last recorded call of tool.
func (w *authWorld) lastCall(tool string) protectedtest.Call {
	w.t.Helper()
	calls := w.ps.Calls()
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].Tool == tool {
			return calls[i]
		}
	}
	w.t.Fatalf("no %s call in %+v", tool, calls)
	return protectedtest.Call{}
}

func whoami(id string) fakemodel.ToolCall {
	return fakemodel.ToolCall{ID: id, Name: "tracker__whoami", Arguments: `{}`}
}

// Two people, one thread, one protected server: each is asked to connect
// privately and acts as themselves; tokens are refreshed mid-session and
// after a wait; a forged or replayed state is refused; a disconnect
// revokes; a restart in the middle of a flow, and another replica's
// redirect, complete it; nothing secret is logged or stored in the clear.
func TestMCPAuthorizationEndToEnd(t *testing.T) {
	w := newAuthWorld(t)
	r := newRig(t, rigOpts{engine: w.engine, mutate: w.bot})
	w.r = r
	team := r.slack.TeamID()
	if err := storage.SetChannelDefault(context.Background(), r.st, team, channel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	r.slack.SetMembers(channel, alice, bob)

	// Alice: nobody has listed the server, so she is offered its connect
	// tool; calling it asks her alone, and once her browser comes back
	// the turn resumes with the server's tools, acting as her.
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "call_c1", Name: "tracker__connect_account", Arguments: `{}`}}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{whoami("call_w1")}},
		fakemodel.Reply{Text: "You are alice at the tracker."})
	thread, _ := r.mention("who am I at the tracker?", "")
	w.browse(r.link(alice, 1), "alice")
	r.waitText(thread, "You are alice at the tracker.")
	first := w.lastCall("whoami")
	if first.Subject != "alice" {
		t.Fatalf("alice's call acted as %q", first.Subject)
	}
	has(t, r.lastToolResult(), "alice", "the whoami result")
	if n := len(r.linkMessages(bob)); n != 0 {
		t.Fatalf("bob got %d links", n)
	}
	w.note(team, alice)

	// Bob in the same thread: the tools are known now, and his call waits
	// for his own connection; alice's token is never his.
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{whoami("call_w2")}}, fakemodel.Reply{Text: "You are bob."})
	r.mentionAs(bob, channel, "and me?", thread)
	w.browse(r.link(bob, 1), "bob")
	r.waitText(thread, "You are bob.")
	bobs := w.lastCall("whoami")
	if bobs.Subject != "bob" || bobs.Fingerprint == first.Fingerprint {
		t.Fatalf("bob's call: %+v (alice's token %s)", bobs, first.Fingerprint)
	}
	if n := len(r.linkMessages(alice)); n != 1 {
		t.Fatalf("alice got %d links, want 1", n)
	}
	w.note(team, bob)

	// A refresh mid-session: the access tokens live 3 s, so alice's next
	// call renews hers: a new token, still alice.
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{whoami("call_w3")}}, fakemodel.Reply{Text: "Still alice."})
	r.mention("again?", thread)
	r.waitText(thread, "Still alice.")
	again := w.lastCall("whoami")
	if again.Subject != "alice" || again.Fingerprint == first.Fingerprint {
		t.Fatalf("after the refresh: %+v (first token %s)", again, first.Fingerprint)
	}
	w.note(team, alice)

	// The token expires while the turn waits for approval: the approved
	// call renews it and acts as alice, who asked, though bob approves
	// nothing (only the owner may).
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "call_i1", Name: "tracker__create_issue", Arguments: `{"title":"Login fails"}`}}},
		fakemodel.Reply{Text: "Filed."})
	r.mention("file the login bug", thread)
	m := r.waitApprovals(thread, 1)[0]
	time.Sleep(3500 * time.Millisecond) // past the access token's life
	r.click(alice, m, "approve")
	r.waitText(thread, "Filed.")
	if c := w.lastCall("create_issue"); c.Subject != "alice" {
		t.Fatalf("the issue was filed as %q", c.Subject)
	}
	has(t, r.lastToolResult(), "as alice", "create_issue's result")
	w.note(team, alice)

	// A forged state, and a real one replayed, are refused.
	resp, err := http.Get(w.pub.URL + connect.CallbackPath + "?state=forged-state&code=forged-code")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a forged state: %d", resp.StatusCode)
	}
	before := len(r.ephemerals(bob))
	if _, err := r.slack.WaitAck(r.slack.SendSlashCommand(slashCmd(bob, "connect tracker")), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	r.waitFor("bob's /agent connect link", func() bool { return len(r.ephemerals(bob)) > before })
	back := protectedtest.BrowseTo(t, r.link(bob, 2), "bob")
	w.secrets[back.Query().Get("code")] = true
	for i, want := range []int{http.StatusOK, http.StatusBadRequest} {
		resp, err := http.Get(back.String())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("redirect %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	w.note(team, bob)

	// Alice disconnects: her token is revoked at the server, and her next
	// call asks her to connect again.
	got := r.slash(alice, channel, "disconnect tracker")
	has(t, got, "Disconnected from `tracker`", "alice's disconnect")
	has(t, got, "The server revoked it too", "alice's disconnect")
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{whoami("call_w4")}}, fakemodel.Reply{Text: "Alice is back."})
	r.mention("who am I now?", thread)
	link := r.link(alice, 2)

	// A restart in the middle of her flow: the new process finishes it
	// (the flow is in the store) and resumes the waiting turn.
	r.restart()
	w.browse(link, "alice")
	r.waitText(thread, "Alice is back.")
	if c := w.lastCall("whoami"); c.Subject != "alice" {
		t.Fatalf("after the restart: %+v", c)
	}
	w.note(team, alice)

	// Bob disconnects; his next flow is begun here and finished by
	// another replica (the load balancer sends his browser there).
	has(t, r.slash(bob, channel, "disconnect tracker"), "Disconnected from `tracker`", "bob's disconnect")
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{whoami("call_w5")}}, fakemodel.Reply{Text: "Bob is back."})
	r.mentionAs(bob, channel, "me again", thread)
	link = r.link(bob, 3)
	w.mu.Lock()
	other := w.connector(w.vault).Handler()
	w.mu.Unlock()
	w.handler.Store(&other)
	w.browse(link, "bob")
	r.waitText(thread, "Bob is back.")
	if c := w.lastCall("whoami"); c.Subject != "bob" {
		t.Fatalf("after another replica's redirect: %+v", c)
	}
	w.note(team, bob)

	// Nothing secret in the debug log, nor in the clear in the store.
	logged := w.log.String()
	if !strings.Contains(logged, "mcp connected") {
		t.Fatal("the debug log holds no connection: the check below would prove nothing")
	}
	var stored []byte
	_ = filepath.WalkDir(r.data, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			stored = append(stored, b...)
		}
		return nil
	})
	if len(w.secrets) < 6 {
		t.Fatalf("only %d secrets noted", len(w.secrets))
	}
	for s := range w.secrets {
		if strings.Contains(logged, s) {
			t.Errorf("the log holds a secret (%.6s…)", s)
		}
		if strings.Contains(string(stored), s) {
			t.Errorf("the store holds a secret in the clear (%.6s…)", s)
		}
	}
}
