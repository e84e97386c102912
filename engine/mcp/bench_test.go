package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
	"agentbot/engine/mcp/mcptest"
	"agentbot/engine/mcp/oauth"
)

// BenchmarkStdioCallOverhead compares the p50 latency of an echo call
// through a Manager Tool with a direct go-sdk ClientSession.CallTool to the
// same stdio server binary; the difference is the Manager's overhead.
func BenchmarkStdioCallOverhead(b *testing.B) {
	bin := mcptest.BuildStdio(b)
	cfg, probs, err := ParseConfig([]byte("servers: [{name: s, transport: stdio, command: "+bin+"}]"), nil)
	if err != nil || len(probs) > 0 {
		b.Fatal(err, probs)
	}
	m := NewManager(cfg, Options{Logger: discardLogger})
	defer m.Close()
	ctx := context.Background()
	list, toolProbs := m.Tools(ctx, []string{"s"})
	var echo Tool
	for _, t := range list {
		if t.Remote() == "echo" {
			echo = t
		}
	}
	if echo.Name == "" {
		b.Fatalf("no echo tool (problems: %v)", toolProbs)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	args := json.RawMessage(`{"text":"ping"}`)
	viaManager := make([]time.Duration, 0, b.N)
	direct := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		r, err := echo.Call(ctx, args)
		t1 := time.Now()
		if err != nil || r.IsError || r.Text != "ping" {
			b.Fatalf("manager call: %+v %v", r, err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}})
		t2 := time.Now()
		if err != nil || res.IsError {
			b.Fatalf("direct call: %v", err)
		}
		viaManager = append(viaManager, t1.Sub(t0))
		direct = append(direct, t2.Sub(t1))
	}
	b.StopTimer()
	pm, pd := p50(viaManager), p50(direct)
	b.ReportMetric(float64(pm.Nanoseconds()), "manager-p50-ns")
	b.ReportMetric(float64(pd.Nanoseconds()), "direct-p50-ns")
	b.ReportMetric(float64((pm - pd).Nanoseconds()), "overhead-p50-ns")
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkTurnListingWithHangingServer is a turn's wait for its tool
// list (SessionTools, as the engine calls it at the start of each turn)
// when one of its two servers hangs: a stdio server that never answers,
// beside a healthy one, once it is known to hang (its first connect timed
// out). Before background listing each turn waited the hung server's
// whole timeout; a server starting cold is still waited for up to its
// timeout, once; known to hang, it costs a turn at most the listing
// budget (150ms). worst-ms is the slowest turn's wait.
func BenchmarkTurnListingWithHangingServer(b *testing.B) {
	bin := mcptest.BuildStdio(b)
	y := "servers:\n  - {name: ok, transport: stdio, command: " + bin + "}\n" +
		"  - {name: hung, transport: stdio, command: sleep, args: [\"3600\"], timeout: 300ms}\n"
	cfg, probs, err := ParseConfig([]byte(y), nil)
	if err != nil || len(probs) > 0 {
		b.Fatal(err, probs)
	}
	m := NewManager(cfg, Options{Logger: discardLogger, TerminateWait: 100 * time.Millisecond})
	defer m.Close()
	servers := []string{"hung", "ok"}
	m.Warm(servers)
	if _, probs := m.ToolsWait(context.Background(), []string{"ok"}); len(probs) > 1 {
		b.Fatalf("healthy server: %v", probs)
	}
	hung := m.conns["hung"]
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		hung.mu.Lock()
		known := hung.shared.failures > 0
		hung.mu.Unlock()
		if known {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the hung server never failed")
		}
	}
	ext := m.SessionTools(func(*engine.Session) []string { return servers }, nil)
	s := &engine.Session{}
	s.ID = "bench"
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		tools := ext(context.Background(), s, nil)
		worst = max(worst, time.Since(start))
		if len(tools) < 5 {
			b.Fatalf("%d tools offered", len(tools))
		}
	}
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}

// anyoneAuth hands every person the token "tok-" and their user id, for
// resource.
type anyoneAuth struct{ resource string }

func (a anyoneAuth) Token(_ context.Context, _ *Server, who Identity) (oauth.Token, error) {
	return oauth.Token{AccessToken: "tok-" + who.User, Resource: a.resource}, nil
}

func (a anyoneAuth) Authorize(context.Context, *Server, Identity, oauth.Token, oauth.Challenge) (oauth.Token, error) {
	return oauth.Token{}, fmt.Errorf("%w: refused", ErrAuthorizationNeeded)
}

// peopleBench is a Manager with the identity user server "prot" (a
// peopleServer in this process that accepts every person's token).
func peopleBench(b *testing.B, opts Options) (*Manager, *peopleServer) {
	p := newPeopleServer(b)
	p.anyone = true
	cfg, probs, err := ParseConfig([]byte("servers:\n"+httpEntry(p.url, "prot", "    identity: user\n")), nil)
	if err != nil || len(probs) > 0 {
		b.Fatal(err, probs)
	}
	opts.Logger, opts.Authorizer = discardLogger, anyoneAuth{resource: p.url}
	m := NewManager(cfg, opts)
	b.Cleanup(func() { _ = m.Close() }) // before the server closes
	return m, p
}

// BenchmarkListingForNewPerson is a turn's tool listing (SessionTools)
// for a person whose session is new, with the server's list known: each
// iteration is another person. The list is served at once, bound to the
// person, without a request to the server (target: under 50ms beyond the
// server's own time, which is none here). server-requests counts the
// requests the listings sent.
func BenchmarkListingForNewPerson(b *testing.B) {
	m, p := peopleBench(b, Options{})
	defer m.Close()
	ext := m.SessionTools(func(*engine.Session) []string { return []string{"prot"} },
		func(s *engine.Session) Identity { return Identity{Kind: IdentityUser, Team: "T", User: s.Person} })
	if n := len(ext(context.Background(), &engine.Session{Person: "first"}, nil)); n != 3 {
		b.Fatalf("first listing: %d tools", n)
	}
	_, _, before := p.seen()
	i := 0
	for b.Loop() {
		i++
		s := &engine.Session{Person: fmt.Sprintf("U%d", i)}
		if n := len(ext(context.Background(), s, nil)); n != 3 {
			b.Fatalf("listing for %s: %d tools", s.Person, n)
		}
	}
	_, _, after := p.seen()
	b.ReportMetric(float64(after-before), "server-requests")
}

// BenchmarkFirstCallOfNewPerson is the first call of a person whose
// session is new (it opens their session: initialize, then the call),
// beside the same through the go-sdk directly (a new client session
// with the person's token, then the call): overhead-ns is the
// Manager's share.
func BenchmarkFirstCallOfNewPerson(b *testing.B) {
	m, p := peopleBench(b, Options{})
	defer m.Close()
	ctx := context.Background()
	echo := echoOf(b, m)
	args := json.RawMessage(`{"text":"hi"}`)
	var viaManager, direct []time.Duration
	i := 0
	for b.Loop() {
		i++
		who := Identity{Kind: IdentityUser, Team: "T", User: fmt.Sprintf("U%d", i)}
		echo := m.conns["prot"].bind([]Tool{echo}, who)[0]
		t0 := time.Now()
		if r, err := echo.Call(ctx, args); err != nil || r.IsError || r.Text != "hi" {
			b.Fatalf("call: %+v %v", r, err)
		}
		t1 := time.Now()
		tr := &sdk.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer("tok-d" + who.User)}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil || res.IsError {
			b.Fatalf("direct call: %v", err)
		}
		t2 := time.Now()
		_ = cs.Close()
		viaManager = append(viaManager, t1.Sub(t0))
		direct = append(direct, t2.Sub(t1))
	}
	pm, pd := p50(viaManager), p50(direct)
	b.ReportMetric(float64(pm.Nanoseconds()), "manager-p50-ns")
	b.ReportMetric(float64(pd.Nanoseconds()), "direct-p50-ns")
	b.ReportMetric(float64((pm - pd).Nanoseconds()), "overhead-p50-ns")
}

// echoOf lists the server prot (as its first person) and returns its
// echo tool.
func echoOf(b *testing.B, m *Manager) Tool {
	list, _ := m.tools(context.Background(), []string{"prot"}, 0, Identity{Kind: IdentityUser, Team: "T", User: "first"})
	for _, t := range list {
		if t.Remote() == "echo" {
			return t
		}
	}
	b.Fatalf("no echo among %v", list)
	return Tool{}
}

// bearer sets a bearer token on every request.
type bearer string

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}

// BenchmarkPeopleSessions opens 200 people's sessions on one HTTP server
// (in this process) and measures the memory they hold: B/session is the
// live heap grown per session through the Manager, direct-B/session the
// same for bare go-sdk client sessions (with the server's side of each,
// counted in both), overhead-B/session the Manager's share; goroutines/
// session likewise. With a cap of 50, peak-sessions is the most the
// server saw live at once (never over the cap).
func BenchmarkPeopleSessions(b *testing.B) {
	const people = 200
	for _, cap := range []int{DefaultMaxSessions, 50} {
		b.Run(fmt.Sprintf("cap=%d", cap), func(b *testing.B) {
			var perManager, perDirect, goroutines float64
			peak := 0
			for b.Loop() {
				m, p := peopleBench(b, Options{MaxSessions: cap})
				echo := echoOf(b, m) // the list known, and its lister's session open
				heap, gor := heapNow()
				openPeople(b, m, echo, people)
				h2, g2 := heapNow()
				if live := m.room.sessions(); live != min(people+1, cap) {
					b.Fatalf("%d sessions live, want %d", live, min(people+1, cap))
				}
				perManager = float64(h2-heap) / float64(min(people, cap))
				goroutines = float64(g2-gor) / float64(min(people, cap))
				_, pk, _ := p.counts()
				peak = max(peak, pk)
				_ = m.Close()
				perDirect = directSessions(b, p, min(people, cap))
			}
			if peak > cap {
				b.Fatalf("the server saw %d sessions at once, over the cap %d", peak, cap)
			}
			b.ReportMetric(perManager, "B/session")
			b.ReportMetric(perDirect, "direct-B/session")
			b.ReportMetric(perManager-perDirect, "overhead-B/session")
			b.ReportMetric(goroutines, "goroutines/session")
			b.ReportMetric(float64(peak), "peak-sessions")
		})
	}
}

// openPeople has n people call echo (a Tool of m), ten at a time, each
// on a session of their own.
func openPeople(b *testing.B, m *Manager, echo Tool, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 10)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			who := Identity{Kind: IdentityUser, Team: "T", User: fmt.Sprintf("P%d", i)}
			t := m.conns["prot"].bind([]Tool{echo}, who)[0]
			if r, err := t.Call(ctx, json.RawMessage(`{"text":"x"}`)); err != nil || r.IsError {
				b.Errorf("%s: %+v %v", who, r, err)
			}
		}()
	}
	wg.Wait()
}

// directSessions opens n bare go-sdk client sessions to p, each calling
// echo once, and returns the live heap grown per session.
func directSessions(b *testing.B, p *peopleServer, n int) float64 {
	ctx := context.Background()
	heap, _ := heapNow()
	var sessions []*sdk.ClientSession
	for i := range n {
		tr := &sdk.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer(fmt.Sprintf("tok-D%d", i))}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, tr, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			b.Fatal(err)
		}
		sessions = append(sessions, cs)
	}
	h2, _ := heapNow()
	for _, cs := range sessions {
		_ = cs.Close()
	}
	return float64(h2-heap) / float64(n)
}

// heapNow is the live heap after a collection, and the goroutines.
func heapNow() (int64, int) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc), runtime.NumGoroutine()
}
