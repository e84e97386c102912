package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine/mcp/oauth"
)

// protected is an MCP server over streamable HTTP behind bearer
// authorization: a request without a known token gets 401 with a
// WWW-Authenticate challenge (scope "read"); a call of the tool write with
// a token without the scope "write" gets 403 insufficient_scope. tokens
// maps each token it accepts to its scopes; seen records the
// Authorization header of each request.
type protected struct {
	url    string
	tokens map[string][]string
	// alwaysInsufficient makes every call 403 insufficient_scope.
	alwaysInsufficient bool

	mu   sync.Mutex
	seen []string
}

func newProtected(t *testing.T, tokens map[string][]string) *protected {
	p := &protected{tokens: tokens}
	s := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	for _, name := range []string{"read", "write"} {
		s.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: name + " done"}}}, nil
			})
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		authz := r.Header.Get("Authorization")
		p.mu.Lock()
		p.seen = append(p.seen, authz)
		p.mu.Unlock()
		meta := p.url + "/.well-known/oauth-protected-resource/mcp"
		scopes, ok := p.tokens[strings.TrimPrefix(authz, "Bearer ")]
		if !ok || !strings.HasPrefix(authz, "Bearer ") {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope="read"`, meta))
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method == "tools/call" && (p.alwaysInsufficient || msg.Params.Name == "write" && !slices.Contains(scopes, "write")) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="read write", resource_metadata=%q`, meta))
			http.Error(w, `{"error":"insufficient_scope"}`, http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.url = hs.URL
	return p
}

// headers are the Authorization headers the server saw.
func (p *protected) headers() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// fakeAuthorizer grants "tok-read" on a 401 and "tok-write" on a step-up,
// for resource; it records the challenges it was told of.
type fakeAuthorizer struct {
	resource string
	// grant, when set, replaces the token granted on a 401.
	grant *oauth.Token

	mu         sync.Mutex
	cur        oauth.Token
	challenges []oauth.ChallengeKind
	who        []Identity
}

func (f *fakeAuthorizer) Token(_ context.Context, _ *Server, who Identity) (oauth.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.who = append(f.who, who)
	return f.cur, nil
}

func (f *fakeAuthorizer) Authorize(_ context.Context, _ *Server, _ Identity, sent oauth.Token, ch oauth.Challenge) (oauth.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur.AccessToken != "" && sent.AccessToken != f.cur.AccessToken {
		return f.cur, nil // another request already replaced it
	}
	f.challenges = append(f.challenges, ch.Kind)
	switch ch.Kind {
	case oauth.NeedsAuthorization:
		f.cur = oauth.Token{AccessToken: "tok-read", Scopes: ch.Scopes, Resource: f.resource}
		if f.grant != nil {
			f.cur = *f.grant
		}
	case oauth.InsufficientScope:
		f.cur = oauth.Token{AccessToken: "tok-write", Scopes: oauth.StepUpScopes(f.cur.Scopes, ch), Resource: f.resource}
	}
	return f.cur, nil
}

func (f *fakeAuthorizer) kinds() []oauth.ChallengeKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.challenges)
}

func findTool(t *testing.T, tools []Tool, remote string) Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Remote() == remote {
			return tl
		}
	}
	t.Fatalf("no tool %s in %v", remote, tools)
	return Tool{}
}

// A service server that answers 401 is authorized by the Authorizer and
// the request sent again with the token; a 403 insufficient_scope is
// stepped up once, to the union of the granted and challenged scopes.
func TestAuthorizerAuthorizesAndStepsUp(t *testing.T) {
	p := newProtected(t, map[string][]string{"tok-read": {"read"}, "tok-write": {"read", "write"}})
	fa := &fakeAuthorizer{resource: p.url + "/mcp"}
	m, logs := setup(t, "servers:\n"+httpEntry(p.url+"/mcp", "prot", "    identity: service\n"), Options{Authorizer: fa})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, probs := m.ToolsWait(ctx, []string{"prot"})
	if len(tools) != 2 || len(probs) != 0 {
		t.Fatalf("tools %v, problems %v", tools, probs)
	}
	if got := fa.kinds(); !slices.Equal(got, []oauth.ChallengeKind{oauth.NeedsAuthorization}) {
		t.Fatalf("challenges after listing = %v, want one 401", got)
	}
	r, err := findTool(t, tools, "read").Call(ctx, json.RawMessage(`{}`))
	if err != nil || r.IsError || r.Text != "read done" {
		t.Fatalf("read: %+v %v", r, err)
	}
	r, err = findTool(t, tools, "write").Call(ctx, json.RawMessage(`{}`))
	if err != nil || r.IsError || r.Text != "write done" {
		t.Fatalf("write: %+v %v", r, err)
	}
	if got := fa.kinds(); !slices.Equal(got, []oauth.ChallengeKind{oauth.NeedsAuthorization, oauth.InsufficientScope}) {
		t.Fatalf("challenges = %v, want a 401 then one step-up", got)
	}
	if fa.cur.AccessToken != "tok-write" || !slices.Equal(fa.cur.Scopes, []string{"read", "write"}) {
		t.Errorf("token after step-up: %v", fa.cur)
	}
	for _, who := range fa.who {
		if who.Kind != IdentityService {
			t.Errorf("the call acted as %v, want the service identity", who)
		}
	}
	if strings.Contains(logs.String(), "tok-") {
		t.Errorf("a token is in the log:\n%s", logs)
	}
}

// A server that keeps answering 403 insufficient_scope is stepped up at
// most maxStepUps times for a call, which then fails.
func TestAuthorizerStepUpLimit(t *testing.T) {
	p := newProtected(t, map[string][]string{"tok-read": {"read"}, "tok-write": {"read", "write"}})
	p.alwaysInsufficient = true
	fa := &fakeAuthorizer{resource: p.url + "/mcp"}
	m, _ := setup(t, "servers:\n"+httpEntry(p.url+"/mcp", "prot", "    identity: service\n"), Options{Authorizer: fa})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, probs := m.ToolsWait(ctx, []string{"prot"})
	if len(tools) != 2 {
		t.Fatalf("tools %v, problems %v", tools, probs)
	}
	r, err := findTool(t, tools, "read").Call(ctx, json.RawMessage(`{}`))
	if err == nil && !r.IsError {
		t.Fatalf("a call refused each time succeeded: %+v", r)
	}
	stepUps := 0
	for _, k := range fa.kinds() {
		if k == oauth.InsufficientScope {
			stepUps++
		}
	}
	if stepUps == 0 || stepUps > maxStepUps {
		t.Fatalf("%d step-ups (%v), want 1 to %d", stepUps, fa.kinds(), maxStepUps)
	}
}

// A token goes only to the resource it was issued for: not to another
// origin the server redirects to, and a token for another resource is
// not sent to the server.
func TestAuthorizerTokenStaysWithItsResource(t *testing.T) {
	// other is an open MCP server on another origin that records what it
	// is sent.
	var mu sync.Mutex
	var otherSaw []string
	s := sdk.NewServer(&sdk.Implementation{Name: "other", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherSaw = append(otherSaw, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)
	// first redirects every request to other, and records what it is sent.
	var firstSaw []string
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		firstSaw = append(firstSaw, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(first.Close)

	fa := &fakeAuthorizer{resource: first.URL + "/mcp"}
	fa.cur = oauth.Token{AccessToken: "tok-first", Resource: first.URL + "/mcp"}
	m, _ := setup(t, "servers:\n"+httpEntry(first.URL+"/mcp", "first", "    identity: service\n"), Options{Authorizer: fa})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tools, probs := m.ToolsWait(ctx, []string{"first"})
	if len(tools) != 1 {
		t.Fatalf("tools %v, problems %v", tools, probs)
	}
	mu.Lock()
	if len(firstSaw) == 0 || firstSaw[0] != "Bearer tok-first" {
		t.Errorf("the server itself was sent %q, want its token", firstSaw)
	}
	for _, a := range otherSaw {
		if a != "" {
			t.Errorf("the other origin was sent Authorization %q", a)
		}
	}
	mu.Unlock()

	// A token issued for another resource is not sent to the server.
	p := newProtected(t, map[string][]string{"tok-elsewhere": {"read"}})
	fb := &fakeAuthorizer{resource: p.url + "/mcp", grant: &oauth.Token{AccessToken: "tok-elsewhere", Resource: other.URL + "/mcp"}}
	m2, _ := setup(t, "servers:\n"+httpEntry(p.url+"/mcp", "prot", "    identity: service\n"), Options{Authorizer: fb})
	_, probs = m2.ToolsWait(ctx, []string{"prot"})
	if len(probs) == 0 || !probs[0].Unavailable {
		t.Fatalf("problems %v, want the server unavailable", probs)
	}
	for _, a := range p.headers() {
		if a != "" {
			t.Errorf("the server was sent Authorization %q of another resource", a)
		}
	}
}
