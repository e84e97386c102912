package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
	"agentbot/engine/mcp"
)

// echoCalls serves an MCP server with one tool, echo, behind p's
// protection, and records the Authorization header of each call with
// its text.
type echoCalls struct {
	mu    sync.Mutex
	calls map[string]string // text → Authorization
}

func (e *echoCalls) handler() http.Handler {
	s := sdk.NewServer(&sdk.Implementation{Name: "tracker", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string
			Params struct{ Arguments struct{ Text string } }
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			e.mu.Lock()
			e.calls[msg.Params.Arguments.Text] = r.Header.Get("Authorization")
			e.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (e *echoCalls) authz(text string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[text]
}

// The Manager acts as each person through the Connector, end to end: Ann,
// not connected, is offered the connect tool, which waits for her; once
// she has connected, it lists the tools, and her call carries her token.
// Bob's call, in the same process, waits for Bob, then carries his own
// token, never Ann's. When the server revokes Ann's grant, her next call
// says her account must be connected again, her token is deleted, and her
// tools wait for her to connect.
func TestManagerActsAsEachPerson(t *testing.T) {
	ctx := context.Background()
	p, st, log, r, s := newWorld(t)
	rec := &echoCalls{calls: map[string]string{}}
	p.Protect(rec.handler())
	m := mcp.NewManager(&mcp.Config{Servers: []mcp.Server{*s}}, mcp.Options{Authorizer: r.Connector, ListBudget: time.Minute,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	t.Cleanup(func() { _ = m.Close() })
	ext := m.SessionTools(func(*engine.Session) []string { return []string{"tracker"} },
		func(s *engine.Session) mcp.Identity {
			return mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: s.Person}
		})
	turn := func(who string) map[string]engine.ExternalTool {
		sess := &engine.Session{Person: who}
		sess.ID = "thread"
		out := map[string]engine.ExternalTool{}
		for _, tl := range ext(ctx, sess, func(n string) { t.Errorf("notice for %s: %s", who, n) }) {
			out[tl.Name] = tl
		}
		return out
	}
	run := func(tl engine.ExternalTool, args string) engine.ExternalReply {
		t.Helper()
		rep, err := tl.Call(ctx, json.RawMessage(args), engine.ExternalCall{Progress: func(string) {}})
		if err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		return rep
	}

	tools := turn("UANN")
	conn, ok := tools["tracker__connect_account"]
	if len(tools) != 1 || !ok || !conn.NeedsConnection(ctx) {
		t.Fatalf("Ann, not connected: %v", slices.Collect(maps.Keys(tools)))
	}
	annTok := connected(t, r, st, s, ann)
	if conn.NeedsConnection(ctx) {
		t.Fatal("Ann connected, and the connect tool still waits")
	}
	if rep := run(conn, `{}`); rep.IsError || !strings.Contains(rep.Text, "tracker__echo") {
		t.Fatalf("the connect tool after connecting: %+v", rep)
	}
	annEcho := turn("UANN")["tracker__echo"]
	if annEcho.Call == nil || annEcho.NeedsConnection(ctx) {
		t.Fatal("Ann's echo is missing or waits")
	}
	if rep := run(annEcho, `{"text":"ann-1"}`); rep.Text != "ann-1" || rec.authz("ann-1") != "Bearer "+annTok.AccessToken {
		t.Fatalf("Ann's call: %+v, carried %q", rep, rec.authz("ann-1"))
	}

	bob := mcp.Identity{Kind: mcp.IdentityUser, Team: "T1", User: "UBOB"}
	bobEcho := turn("UBOB")["tracker__echo"]
	if bobEcho.Call == nil || !bobEcho.NeedsConnection(ctx) {
		t.Fatal("Bob's echo does not wait for Bob to connect")
	}
	bobTok := connected(t, r, st, s, bob)
	if bobEcho.NeedsConnection(ctx) || bobTok.AccessToken == annTok.AccessToken {
		t.Fatal("Bob connected: his echo still waits, or he has Ann's token")
	}
	type want struct {
		tool      engine.ExternalTool
		text, tok string
	}
	for _, c := range []want{
		{bobEcho, "bob-1", bobTok.AccessToken}, {annEcho, "ann-2", annTok.AccessToken}, {bobEcho, "bob-2", bobTok.AccessToken},
	} {
		if rep := run(c.tool, `{"text":"`+c.text+`"}`); rep.Text != c.text || rec.authz(c.text) != "Bearer "+c.tok {
			t.Fatalf("%s: %+v, carried %q", c.text, rep, rec.authz(c.text))
		}
	}

	p.RevokeAll()
	rep := run(annEcho, `{"text":"ann-3"}`)
	if !rep.IsError || !strings.Contains(rep.Text, "must be connected again") {
		t.Fatalf("Ann's call after the revocation: %+v", rep)
	}
	if _, kept := st.token("T1", "UANN", "tracker"); kept || !annEcho.NeedsConnection(ctx) {
		t.Fatalf("after the revocation: token kept %v, the tool waits %v", kept, annEcho.NeedsConnection(ctx))
	}
	noSecret(t, "the log", log.String(), annTok.AccessToken, annTok.RefreshToken, bobTok.AccessToken, bobTok.RefreshToken)
}
