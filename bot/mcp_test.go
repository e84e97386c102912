package bot_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/engine"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/mcptest"
)

// withNotesServer offers each session the tools of the MCP servers its
// channel adds (bot.ChannelServers), from a config naming one server,
// "notes": the mcptest server hs, reached through engine/mcp over
// streamable HTTP.
func withNotesServer(t testing.TB, hs *mcptest.HTTPServer) func(*engine.Config) {
	return withNotesURL(t, hs.URL)
}

// withNotesURL is withNotesServer for the MCP endpoint url.
func withNotesURL(t testing.TB, url string) func(*engine.Config) {
	t.Helper()
	cfg := &mcp.Config{Servers: []mcp.Server{{Name: "notes", Transport: mcp.TransportHTTP, URL: url, Timeout: 5 * time.Second}}}
	mgr := mcp.NewManager(cfg, mcp.Options{ListBudget: time.Minute}) // wait for the list: these tests are not about the budget
	t.Cleanup(func() { _ = mgr.Close() })
	return func(c *engine.Config) {
		channelServers := bot.ChannelServers(c.Store.(bot.ChannelToolsReader))
		c.ExternalTools = mgr.SessionTools(func(s *engine.Session) []string {
			servers, err := channelServers(s.Key)
			if err != nil {
				t.Errorf("channel servers: %v", err)
			}
			return servers
		}, func(s *engine.Session) mcp.Identity {
			team, user := bot.SessionPerson(s)
			return mcp.Identity{Kind: mcp.IdentityUser, Team: team, User: user}
		})
	}
}

// callWatch is a proxy in front of an MCP endpoint that counts the
// tools/call requests passing through it.
type callWatch struct {
	URL   string
	calls atomic.Int64
}

func newCallWatch(t testing.TB, target string) *callWatch {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	w := &callWatch{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1 // stream server-sent events at once
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			w.calls.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL + u.Path
	return w
}
