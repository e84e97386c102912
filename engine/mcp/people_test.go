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

	"agentbot/engine"
	"agentbot/engine/mcp/oauth"
	"agentbot/engine/transcript"
)

// peopleServer is an MCP server over streamable HTTP (the go-sdk's) that
// accepts the bearer tokens in valid and answers any other request 401
// with a challenge. It records the Authorization header and the "text"
// argument of every tool call, which token opened each MCP session, and
// how many sessions are live at once (opened by an initialize, ended by
// a DELETE). Its tools: echo (returns text), slow (echo after 20ms) and
// hold (returns once release is closed).
type peopleServer struct {
	url     string
	release chan struct{}
	// anyone makes it accept every token "tok-…" (for benchmarks).
	anyone bool

	mu       sync.Mutex
	valid    map[string]bool
	calls    []seenCall
	sessions map[string]string // MCP session id → the Authorization that opened it
	crossed  []string          // requests of a session with another person's token
	requests int
	live     int
	peak     int
	opened   int
}

// seenCall is one tool call as the server saw it.
type seenCall struct{ authz, text string }

func newPeopleServer(t testing.TB) *peopleServer {
	p := &peopleServer{release: make(chan struct{}), valid: map[string]bool{}, sessions: map[string]string{}}
	s := sdk.NewServer(&sdk.Implementation{Name: "people", Version: "1"}, nil)
	text := func(req *sdk.CallToolRequest) string {
		var a struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a.Text
	}
	reply := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: schema, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return reply(text(req)), nil
		})
	s.AddTool(&sdk.Tool{Name: "slow", InputSchema: schema},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			time.Sleep(20 * time.Millisecond)
			return reply(text(req)), nil
		})
	s.AddTool(&sdk.Tool{Name: "hold", InputSchema: schema},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-p.release:
				return reply(text(req)), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(h, w, r) }))
	t.Cleanup(hs.Close)
	t.Cleanup(func() {
		select {
		case <-p.release:
		default:
			close(p.release)
		}
	})
	p.url = hs.URL + "/mcp"
	return p
}

func (p *peopleServer) serve(h http.Handler, w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	authz := r.Header.Get("Authorization")
	sid := r.Header.Get("Mcp-Session-Id")
	p.mu.Lock()
	p.requests++
	tok, bearer := strings.CutPrefix(authz, "Bearer ")
	ok := bearer && (p.valid[tok] || p.anyone && strings.HasPrefix(tok, "tok-"))
	if ok && sid != "" && p.sessions[sid] != "" && p.sessions[sid] != authz {
		p.crossed = append(p.crossed, fmt.Sprintf("session opened with %q used with %q", p.sessions[sid], authz))
	}
	if ok && r.Method == http.MethodDelete && sid != "" {
		p.live-- // before the answer: the client may open another at once
	}
	p.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+p.url+`/.well-known/oauth-protected-resource", scope="read"`)
		http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	if msg.Method == "tools/call" && !p.anyone {
		p.mu.Lock()
		p.calls = append(p.calls, seenCall{authz, msg.Params.Arguments.Text})
		p.mu.Unlock()
	}
	h.ServeHTTP(w, r)
	if id := w.Header().Get("Mcp-Session-Id"); sid == "" && id != "" && r.Method == http.MethodPost {
		p.mu.Lock()
		p.sessions[id] = authz
		p.opened++
		p.live++
		p.peak = max(p.peak, p.live)
		p.mu.Unlock()
	}
}

// accept makes the server accept token (or refuse it: accept false).
func (p *peopleServer) accept(token string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.valid[token] = ok
}

func (p *peopleServer) seen() (calls []seenCall, crossed []string, requests int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls), slices.Clone(p.crossed), p.requests
}

func (p *peopleServer) counts() (live, peak, opened int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live, p.peak, p.opened
}

// peopleAuth is an Authorizer that hands each person the token they
// connected with (connect), for resource; a person without one, or whose
// token the server refused, must connect: ErrAuthorizationNeeded.
type peopleAuth struct {
	resource string

	mu     sync.Mutex
	tokens map[string]string // team/user → token
}

func newPeopleAuth(resource string) *peopleAuth {
	return &peopleAuth{resource: resource, tokens: map[string]string{}}
}

func (a *peopleAuth) connect(team, user, token string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tokens[team+"/"+user] = token
}

func (a *peopleAuth) Token(_ context.Context, _ *Server, who Identity) (oauth.Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if tok := a.tokens[who.Team+"/"+who.User]; tok != "" {
		return oauth.Token{AccessToken: tok, Resource: a.resource}, nil
	}
	return oauth.Token{}, nil
}

func (a *peopleAuth) Authorize(_ context.Context, _ *Server, who Identity, sent oauth.Token, _ oauth.Challenge) (oauth.Token, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if tok := a.tokens[who.Team+"/"+who.User]; tok != "" && tok != sent.AccessToken {
		return oauth.Token{AccessToken: tok, Resource: a.resource}, nil
	}
	return oauth.Token{}, fmt.Errorf("%w: %s must connect", ErrAuthorizationNeeded, who)
}

// user is the identity of a person of team T.
func user(name string) Identity { return Identity{Kind: IdentityUser, Team: "T", User: name} }

// peopleSetup is a Manager with the identity user server "prot" in front
// of p, authorized by a, people A and B connected (tokens tok-A, tok-B).
func peopleSetup(t *testing.T, p *peopleServer, opts Options) (*Manager, *peopleAuth) {
	t.Helper()
	a := newPeopleAuth(p.url)
	for _, n := range []string{"A", "B"} {
		a.connect("T", n, "tok-"+n)
		p.accept("tok-"+n, true)
	}
	opts.Authorizer = a
	m, _ := setup(t, "servers:\n"+httpEntry(p.url, "prot", "    identity: user\n"), opts)
	return m, a
}

// toolsOf lists servers as who, waiting for them; the tools by name.
func toolsOf(t *testing.T, m *Manager, who Identity, servers ...string) map[string]Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, probs := m.tools(ctx, servers, 0, who)
	out := map[string]Tool{}
	for _, tl := range list {
		out[tl.Name] = tl
	}
	for _, p := range probs {
		t.Logf("problem: %s", p)
	}
	return out
}

// Two people in one process act as themselves: each call carries its own
// person's token, on a session of their own, never the other's, however
// their calls interleave; neither must connect.
func TestPeopleActAsThemselves(t *testing.T) {
	p := newPeopleServer(t)
	m, _ := peopleSetup(t, p, Options{})
	ctx := context.Background()
	byPerson := map[string]Tool{}
	for _, n := range []string{"A", "B"} {
		ts := toolsOf(t, m, user(n), "prot")
		echo := get(t, ts, "prot__echo")
		if echo.External().NeedsConnection(ctx) {
			t.Errorf("%s is connected, but the tool needs a connection", n)
		}
		byPerson[n] = echo
	}
	var wg sync.WaitGroup
	for i := range 8 {
		for _, n := range []string{"A", "B"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				text := fmt.Sprintf("%s-%d", n, i)
				if r := call(t, byPerson[n], `{"text":"`+text+`"}`); r.IsError || r.Text != text {
					t.Errorf("%s: %+v", text, r)
				}
			}()
		}
	}
	wg.Wait()
	calls, crossed, _ := p.seen()
	if len(calls) != 16 {
		t.Fatalf("the server saw %d calls, want 16", len(calls))
	}
	for _, c := range calls {
		if want := "Bearer tok-" + strings.Split(c.text, "-")[0]; c.authz != want {
			t.Errorf("call %s carried %q, want %q", c.text, c.authz, want)
		}
	}
	if len(crossed) > 0 {
		t.Errorf("sessions crossed people: %v", crossed)
	}
	waitCounts(t, p, 2, 2) // one session per person
}

// A person who has not connected, at a server nobody has listed yet, is
// offered the connect tool alone, which waits for them to connect (and is
// not reported unavailable); once connected, calling it lists the tools
// and says so, and their next listing has the server's tools, acting as
// them. Someone else who is not connected then gets the connect tool at
// once, without a request to the server.
func TestConnectToolUntilConnected(t *testing.T) {
	p := newPeopleServer(t)
	m, a := peopleSetup(t, p, Options{})
	ext := m.SessionTools(func(*engine.Session) []string { return []string{"prot"} },
		func(s *engine.Session) Identity { return user(s.Person) })
	s := &engine.Session{Person: "C"}
	s.ID = "s1"
	ctx := context.Background()
	var notices []string
	got := ext(ctx, s, func(n string) { notices = append(notices, n) })
	if len(got) != 1 || got[0].Name != "prot__connect_account" || len(notices) > 0 {
		t.Fatalf("tools %+v, notices %v; want the connect tool alone", got, notices)
	}
	connectTool := got[0]
	if connectTool.NeedsConnection == nil || !connectTool.NeedsConnection(ctx) || connectTool.Policy != PolicyAuto {
		t.Fatalf("the connect tool does not wait for the connection: %+v", connectTool)
	}
	_, _, before := p.seen()
	s2 := &engine.Session{Person: "D"}
	s2.ID = "s2"
	if got := ext(ctx, s2, nil); len(got) != 1 || got[0].Name != "prot__connect_account" {
		t.Fatalf("D: %+v", got)
	}
	if _, _, after := p.seen(); after != before {
		t.Errorf("listing for D, not connected, sent %d requests", after-before)
	}

	a.connect("T", "C", "tok-C")
	p.accept("tok-C", true)
	if connectTool.NeedsConnection(ctx) {
		t.Fatal("C connected, and the connect tool still waits")
	}
	r, err := connectTool.Call(ctx, json.RawMessage(`{}`), engine.ExternalCall{Progress: func(string) {}})
	if err != nil || r.IsError || !strings.Contains(r.Text, "available now") || !strings.Contains(r.Text, "prot__echo") {
		t.Fatalf("connect tool after connecting: %+v %v", r, err)
	}
	got = ext(ctx, s, nil)
	names := map[string]engine.ExternalTool{}
	for _, tl := range got {
		names[tl.Name] = tl
	}
	echo, ok := names["prot__echo"]
	if _, still := names["prot__connect_account"]; !ok || still {
		t.Fatalf("after connecting: %v", got)
	}
	if echo.NeedsConnection(ctx) {
		t.Error("C's echo needs a connection")
	}
	rep, err := echo.Call(ctx, json.RawMessage(`{"text":"C-1"}`), engine.ExternalCall{Progress: func(string) {}})
	if err != nil || rep.IsError || rep.Text != "C-1" {
		t.Fatalf("echo as C: %+v %v", rep, err)
	}
	calls, _, _ := p.seen()
	if last := calls[len(calls)-1]; last.authz != "Bearer tok-C" {
		t.Errorf("C's call carried %q", last.authz)
	}
	// D is still not connected: the server's tools, now known, wait for D.
	for _, tl := range ext(ctx, s2, nil) {
		if tl.NeedsConnection == nil || !tl.NeedsConnection(ctx) {
			t.Errorf("D's %s does not wait for D to connect", tl.Name)
		}
	}
}

// A resumed turn whose waiting call is the connect tool's gets that tool
// again, though the person's listing now has the server's tools.
func TestPendingConnectToolKept(t *testing.T) {
	p := newPeopleServer(t)
	m, _ := peopleSetup(t, p, Options{})
	ext := m.SessionTools(func(*engine.Session) []string { return []string{"prot"} },
		func(s *engine.Session) Identity { return user(s.Person) })
	s := &engine.Session{Person: "A"}
	s.ID = "s1"
	has := func(name string) bool {
		return slices.ContainsFunc(ext(context.Background(), s, nil), func(t engine.ExternalTool) bool { return t.Name == name })
	}
	if !has("prot__echo") || has("prot__connect_account") {
		t.Fatal("A, connected, is offered the connect tool, or not the server's")
	}
	s.Pending = append(s.Pending, transcript.Approval{CallID: "c1", Tool: "prot__connect_account", Server: "prot", Kind: transcript.GateConnect, Person: "A"})
	if !has("prot__connect_account") || !has("prot__echo") {
		t.Fatal("the waiting connect tool is missing from the resumed turn")
	}
}

// A server that refuses a person's token (revoked, and not renewable)
// gives their call an error result saying the account must be connected
// again; their tools then wait for them to connect, until they do.
func TestRefusedTokenMustBeConnectedAgain(t *testing.T) {
	p := newPeopleServer(t)
	m, a := peopleSetup(t, p, Options{})
	ctx := context.Background()
	echo := get(t, toolsOf(t, m, user("A"), "prot"), "prot__echo")
	if r := call(t, echo, `{"text":"one"}`); r.IsError {
		t.Fatalf("first call: %+v", r)
	}
	p.accept("tok-A", false)
	r := call(t, echo, `{"text":"two"}`)
	if !r.IsError || !strings.Contains(r.Text, "must be connected again") {
		t.Fatalf("call with a refused token: %+v", r)
	}
	if !echo.External().NeedsConnection(ctx) {
		t.Fatal("after the refusal, the tool does not wait for A to connect")
	}
	if b := get(t, toolsOf(t, m, user("B"), "prot"), "prot__echo"); b.External().NeedsConnection(ctx) {
		t.Error("B must connect because A's token was refused")
	}
	a.connect("T", "A", "tok-A2")
	p.accept("tok-A2", true)
	if echo.External().NeedsConnection(ctx) {
		t.Fatal("A connected again, and the tool still waits")
	}
	if r := call(t, echo, `{"text":"three"}`); r.IsError || r.Text != "three" {
		t.Fatalf("after connecting again: %+v", r)
	}
}

// A person whose session is new gets the server's known tool list without
// any request to the server; their session opens on their first call.
func TestNewPersonGetsTheCachedList(t *testing.T) {
	p := newPeopleServer(t)
	m, _ := peopleSetup(t, p, Options{})
	if len(toolsOf(t, m, user("A"), "prot")) != 3 {
		t.Fatal("A's listing")
	}
	_, _, before := p.seen()
	ts := toolsOf(t, m, user("B"), "prot")
	if _, _, after := p.seen(); len(ts) != 3 || after != before {
		t.Fatalf("B's listing: %d tools, %d requests", len(ts), after-before)
	}
	waitCounts(t, p, 1, 1) // A's, by listing
	if r := call(t, get(t, ts, "prot__echo"), `{"text":"B-1"}`); r.IsError {
		t.Fatalf("B's call: %+v", r)
	}
	calls, _, _ := p.seen()
	if calls[len(calls)-1].authz != "Bearer tok-B" {
		t.Errorf("B's call carried %q", calls[len(calls)-1].authz)
	}
	waitCounts(t, p, 2, 2) // and B's, by the call
}

// A person's session unused for IdleTimeout is closed (the server sees it
// end), and their next call opens a new one.
func TestIdlePersonSessionCloses(t *testing.T) {
	p := newPeopleServer(t)
	m, _ := peopleSetup(t, p, Options{IdleTimeout: 100 * time.Millisecond})
	echo := get(t, toolsOf(t, m, user("A"), "prot"), "prot__echo")
	if r := call(t, echo, `{"text":"x"}`); r.IsError {
		t.Fatal(r.Text)
	}
	waitFor(t, "the idle session to close", func() bool { live, _, _ := p.counts(); return live == 0 })
	waitFor(t, "the room to be given back", func() bool { return m.room.sessions() == 0 })
	c := m.conns["prot"]
	c.mu.Lock()
	left := len(c.links)
	c.mu.Unlock()
	if left != 0 {
		t.Errorf("%d links kept after the idle close", left)
	}
	if r := call(t, echo, `{"text":"y"}`); r.IsError || r.Text != "y" {
		t.Fatalf("after the idle close: %+v", r)
	}
	waitCounts(t, p, 1, 2) // a new session
}

// waitCounts waits until the server counts live sessions live and
// opened in all (it counts a session once its opening answer is sent,
// which the client may have read before).
func waitCounts(t *testing.T, p *peopleServer, live, opened int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, _, o := p.counts()
		if l == live && o == opened {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server counts %d sessions live, %d opened; want %d, %d", l, o, live, opened)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Live per-person sessions never exceed MaxSessions: with more people than
// room, the least recently used idle session is closed for a new one, or a
// new one waits for one to become idle. A call under way is never cut.
func TestSessionCapHonoured(t *testing.T) {
	p := newPeopleServer(t)
	const maxSessions = 3
	m, a := peopleSetup(t, p, Options{MaxSessions: maxSessions})
	people := []string{"A", "B"}
	for i := range 8 {
		n := fmt.Sprintf("P%d", i)
		a.connect("T", n, "tok-"+n)
		p.accept("tok-"+n, true)
		people = append(people, n)
	}
	ctx := context.Background()
	// A holds a call under way throughout.
	hold := get(t, toolsOf(t, m, user("A"), "prot"), "prot__hold")
	held := make(chan Result, 1)
	go func() {
		r, _ := hold.Call(ctx, json.RawMessage(`{"text":"held"}`))
		held <- r
	}()
	waitFor(t, "A's call to start", func() bool { calls, _, _ := p.seen(); return len(calls) == 1 })
	var wg sync.WaitGroup
	for _, n := range people[1:] {
		slow := get(t, toolsOf(t, m, user(n), "prot"), "prot__slow")
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				text := fmt.Sprintf("%s-%d", n, i)
				if r := call(t, slow, `{"text":"`+text+`"}`); r.IsError || r.Text != text {
					t.Errorf("%s: %+v", text, r)
				}
			}()
		}
	}
	stop := make(chan struct{})
	peakRoom := make(chan int)
	go func() { // the Manager's own count, sampled
		peak := 0
		for {
			select {
			case <-stop:
				peakRoom <- peak
				return
			default:
				peak = max(peak, m.room.sessions())
				time.Sleep(time.Millisecond)
			}
		}
	}()
	wg.Wait()
	close(stop)
	if got := <-peakRoom; got > maxSessions {
		t.Errorf("the Manager counted %d live sessions, over %d", got, maxSessions)
	}
	close(p.release)
	if r := <-held; r.IsError || r.Text != "held" {
		t.Fatalf("A's call under way was cut: %+v", r)
	}
	_, peak, opened := p.counts()
	if peak > maxSessions || opened <= maxSessions {
		t.Errorf("the server saw %d sessions at once (max %d), %d opened in all", peak, maxSessions, opened)
	}
	calls, crossed, _ := p.seen()
	for _, c := range calls {
		if want := "Bearer tok-" + strings.Split(c.text, "-")[0]; c.text != "held" && c.authz != want {
			t.Errorf("call %s carried %q", c.text, c.authz)
		}
	}
	if len(crossed) > 0 {
		t.Errorf("sessions crossed people: %v", crossed)
	}
}

// Close while people's sessions connect, wait for room and call: every
// call returns, and Close waits for all of it.
func TestCloseWhilePeopleConnect(t *testing.T) {
	p := newPeopleServer(t)
	m, a := peopleSetup(t, p, Options{MaxSessions: 2})
	get(t, toolsOf(t, m, user("A"), "prot"), "prot__echo")
	var wg sync.WaitGroup
	for i := range 12 {
		n := fmt.Sprintf("P%d", i)
		a.connect("T", n, "tok-"+n)
		p.accept("tok-"+n, true)
		echo := get(t, toolsOf(t, m, user(n), "prot"), "prot__slow")
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = echo.Call(context.Background(), json.RawMessage(`{"text":"x"}`))
		}()
	}
	time.Sleep(30 * time.Millisecond)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := m.room.sessions(); n != 0 {
		t.Errorf("%d sessions counted after Close", n)
	}
}

// Without an Authorizer, an identity user server that asks for
// authorization is unavailable, saying why (no connect tool: nothing
// could connect anyone); one that asks for none works, a session per
// person.
func TestUserServerWithoutAuthorizer(t *testing.T) {
	p := newPeopleServer(t)
	open := askServer(t, nil)
	m, _ := setup(t, "servers:\n"+httpEntry(p.url, "prot", "")+httpEntry(open, "open", ""), Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, probs := m.tools(ctx, []string{"prot"}, 0, user("A"))
	if len(list) != 0 || len(probs) != 1 || !probs[0].Unavailable || !strings.Contains(probs[0].Reason, "needs an authorizer") {
		t.Fatalf("tools %v, problems %v", list, probs)
	}
	ts := toolsOf(t, m, user("A"), "open")
	if len(ts) != 1 {
		t.Fatalf("open server: %v", ts)
	}
	for _, tl := range ts {
		if tl.External().NeedsConnection != nil {
			t.Error("without an Authorizer, a tool asks for a connection")
		}
	}
}

// An identity user server known to be failing (it hung at someone's
// first listing) is not waited for as a cold start again: a new person's
// listing costs only the budget, and says the server is unavailable.
func TestHungUserServerKnownToFail(t *testing.T) {
	stop := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server sees the client go
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(stop) })
	m, _ := setup(t, "servers:\n"+httpEntry(hung.URL+"/mcp", "hung", "    identity: user\n    timeout: 300ms\n"),
		Options{ListBudget: 50 * time.Millisecond})
	c := m.conns["hung"]
	cold := func(who string) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.linkOf(user(who)).cold()
	}
	if !cold("A") {
		t.Fatal("a server never listed is not cold")
	}
	_, probs := m.tools(context.Background(), []string{"hung"}, m.opts.ListBudget, user("A"))
	if len(probs) != 1 || !probs[0].Unavailable {
		t.Fatalf("A: problems %v", probs)
	}
	waitFor(t, "A's failure to be recorded", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.failing })
	if cold("B") {
		t.Fatal("the server is known to fail, and B's listing would wait for it as a cold start")
	}
	if _, probs := m.tools(context.Background(), []string{"hung"}, m.opts.ListBudget, user("B")); len(probs) != 1 || !probs[0].Unavailable {
		t.Fatalf("B: problems %v", probs)
	}
}
