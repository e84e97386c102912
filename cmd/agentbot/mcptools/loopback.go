package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"agentbot/cmd/agentbot/chat"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/connect"
	"agentbot/engine/mcp/oauth"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// Loopback is MCP authorization in the terminal: the person connects in
// their browser, and the authorization server redirects to a loopback
// address on this machine (RFC 8252 section 7.3: http://127.0.0.1 on a
// port chosen now), which this process serves for as long as it runs.
// With the secret key, tokens are sealed in the store as serve keeps them
// (the next chat finds them); without one they live in memory only, for
// this run.
type Loopback struct {
	// Connector is the mcp.Authorizer of the chat's Manager.
	Connector *connect.Connector
	// Kept says whether tokens are kept in the store (a secret key is
	// set) or only for this run.
	Kept bool

	cfg  *mcp.Config
	srv  *http.Server
	done chan struct{}

	mu      sync.Mutex
	waiters map[string]chan struct{} // by user and server
}

// StartLoopback serves the loopback redirect of mc's servers that use
// OAuth (identity user or service); nil (and no error) when none does.
// st keeps the sealed tokens when the secret key (read through getenv)
// is set.
func StartLoopback(mc *mcp.Config, st storage.Credentials, getenv func(string) string, log *slog.Logger) (*Loopback, error) {
	servers, implied := oauthServersOf(mc)
	if len(servers)+len(implied) == 0 {
		return nil, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the loopback redirect for MCP authorization: %w", err)
	}
	l := &Loopback{cfg: mc, done: make(chan struct{}), waiters: map[string]chan struct{}{}}
	var store connect.Store = connect.NewMemoryStore()
	notFound := connect.ErrNotFound
	switch kr, err := secretbox.Load(getenv); {
	case err == nil:
		vault, verr := credentials.New(st, kr, log)
		if verr != nil {
			_ = ln.Close()
			return nil, verr
		}
		store, notFound, l.Kept = vault, storage.ErrNotFound, true
	case !errors.Is(err, secretbox.ErrNoKey):
		_ = ln.Close()
		return nil, fmt.Errorf("the secret key: %w", err)
	}
	l.Connector = &connect.Connector{
		Store: store, NotFound: notFound, ServiceUser: storage.ServiceUser,
		PublicURL: "http://" + ln.Addr().String(), ClientName: "agentbot (terminal)", Log: log,
		OnConnected: l.connected,
	}
	l.srv = &http.Server{Handler: l.Connector.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(l.done)
		_ = l.srv.Serve(ln)
	}()
	return l, nil
}

// Close stops serving the redirect.
func (l *Loopback) Close() {
	if l == nil {
		return
	}
	_ = l.srv.Close()
	<-l.done
}

// connected wakes the Connect waiting on c's person and server.
func (l *Loopback) connected(c connect.Connected) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch, ok := l.waiters[c.User+"\x00"+c.Server]; ok {
		close(ch)
		delete(l.waiters, c.User+"\x00"+c.Server)
	}
}

// Connect connects the account of the terminal's person (user) at
// server: it prints the link to open to w and waits until the browser
// comes back through the redirect (true), the link expires or ctx ends
// (false).
func (l *Loopback) Connect(ctx context.Context, w io.Writer, server, user string) (bool, error) {
	s := Linker{Config: l.cfg}.server(server)
	if s == nil {
		return false, fmt.Errorf("no MCP server %q in the MCP configuration", server)
	}
	who := mcp.Identity{Kind: mcp.IdentityUser, Team: TerminalTeam, User: user}
	if mcp.IdentityOf(s) == mcp.IdentityService {
		who = mcp.Identity{Kind: mcp.IdentityService}
	}
	wake := make(chan struct{})
	l.mu.Lock()
	l.waiters[user+"\x00"+server] = wake
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.waiters[user+"\x00"+server] == wake {
			delete(l.waiters, user+"\x00"+server)
		}
	}()
	link, err := l.Connector.ConnectURL(ctx, s, who)
	if err != nil {
		return false, err
	}
	ttl := l.Connector.FlowTTL
	if ttl <= 0 {
		ttl = oauth.DefaultFlowTTL
	}
	kept := "Your token is kept for this run only (set AGENTBOT_SECRET_KEY to keep it, encrypted)."
	if l.Kept {
		kept = "Your token is kept encrypted in this data folder; `agentbot connections revoke` ends it."
	}
	fmt.Fprintf(w, "\n  ? The agent needs your account at %s. Open this link in your browser to connect it (it works once, for %s):\n\n      %s\n\n  %s\n  Waiting for the browser… (Ctrl-C gives up)\n",
		server, ttl.Round(time.Minute), link, kept)
	timer := time.NewTimer(ttl)
	defer timer.Stop()
	select {
	case <-wake:
		fmt.Fprintf(w, "  ✓ connected to %s\n", server)
		return true, nil
	case <-timer.C:
		fmt.Fprintf(w, "  ! the link to %s expired; going on without it\n", server)
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// ForTerminal starts the MCP side of agentbot chat: mc's servers, those
// that use OAuth connected by the terminal's person through the loopback
// redirect (t.Connect, the link printed to out), and the servers'
// questions asked on t. stop stops them all.
func ForTerminal(ctx context.Context, mc *mcp.Config, st storage.Credentials, getenv func(string) string, log *slog.Logger,
	t *chat.Terminal, out, errOut io.Writer) (tools *Tools, stop func(), err error) {
	loop, err := StartLoopback(mc, st, getenv, log)
	if err != nil {
		return nil, nil, err
	}
	opts := mcp.Options{Logger: log}
	if loop != nil {
		opts.Authorizer = loop.Connector
		t.Connect = func(server string) bool {
			ok, err := loop.Connect(ctx, out, server, getenv("USER"))
			if err != nil {
				fmt.Fprintf(errOut, "agentbot chat: connect %s: %v\n", server, err)
			}
			return ok
		}
	}
	tools = New(mc, opts)
	if tools != nil {
		tools.Ask = t.Ask // a server's question is asked on the terminal
	}
	return tools, func() { tools.Close(); loop.Close() }, nil
}
