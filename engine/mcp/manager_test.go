package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"agentbot/engine/fixtures"
	"agentbot/engine/mcp/mcptest"
)

// TestMain ends the run with one line saying how many tests skipped for
// what is missing here (the MCP reference servers from npm), and how to
// run them.
func TestMain(m *testing.M) {
	code := fixtures.Main(m)
	mcptest.RemoveBuilds()
	os.Exit(code)
}

const secret = "s3cr3t-token"

// serverYAML is one server entry of each transport for the test servers.
func stdioEntry(t *testing.T, name, extra string) string {
	return fmt.Sprintf("  - name: %s\n    transport: stdio\n    command: %s\n%s", name, mcptest.BuildStdio(t), extra)
}

func httpEntry(url, name, extra string) string {
	return fmt.Sprintf("  - name: %s\n    transport: http\n    url: %s\n%s", name, url, extra)
}

// setup parses the config (no problems allowed) and returns a Manager closed
// at the end of the test, logging into the returned buffer.
func setup(t *testing.T, y string, opts Options) (*Manager, *syncBuf) {
	t.Helper()
	cfg, probs, err := ParseConfig([]byte(y), envOf(map[string]string{"MCP_SECRET": secret}))
	if err != nil || len(probs) > 0 {
		t.Fatalf("config: %v %v", err, probs)
	}
	logs := &syncBuf{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if opts.ListBudget == 0 { // tests wait for the list unless they test the budget
		opts.ListBudget = time.Minute
	}
	m := NewManager(cfg, opts)
	t.Cleanup(func() { _ = m.Close() })
	return m, logs
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func tools(t *testing.T, m *Manager, servers ...string) map[string]Tool {
	t.Helper()
	list, probs := m.Tools(context.Background(), servers)
	out := map[string]Tool{}
	for _, tl := range list {
		out[tl.Name] = tl
	}
	for _, p := range probs {
		t.Logf("problem: %s", p)
	}
	return out
}

func call(t *testing.T, tl Tool, args string) Result {
	t.Helper()
	r, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", tl.Name, err)
	}
	return r
}

func get(t *testing.T, ts map[string]Tool, name string) Tool {
	t.Helper()
	tl, ok := ts[name]
	if !ok {
		t.Fatalf("no tool %s among %d", name, len(ts))
	}
	return tl
}

func TestListAndCallBothTransports(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "local", "")+httpEntry(hs.URL, "remote", ""), Options{})
	ts := tools(t, m, "local", "remote")
	for _, srv := range []string{"local", "remote"} {
		echo := get(t, ts, srv+"__echo")
		if echo.Server != srv || echo.Remote() != "echo" || !echo.ReadOnly || echo.Description != "Echo the text back." {
			t.Errorf("%s echo = %+v", srv, echo)
		}
		var schema map[string]any
		if err := json.Unmarshal(echo.Schema, &schema); err != nil || schema["type"] != "object" || schema["properties"] == nil {
			t.Errorf("%s echo schema = %s (%v)", srv, echo.Schema, err)
		}
		r := call(t, echo, `{"text":"hello `+srv+`"}`)
		if r.IsError || r.Text != "hello "+srv || r.Bytes != len(r.Text) || r.Truncated {
			t.Errorf("%s echo result = %+v", srv, r)
		}
		r = call(t, get(t, ts, srv+"__structured"), ``)
		if r.IsError || r.Text != `{"n":42}` {
			t.Errorf("%s structured = %+v", srv, r)
		}
		r = call(t, echo, `[1,2]`)
		if !r.IsError || !strings.Contains(r.Text, "JSON object") {
			t.Errorf("%s non-object args = %+v", srv, r)
		}
	}
	if _, ok := ts["local__crash"]; !ok {
		t.Error("stdio server lacks crash")
	}
}

func TestFilters(t *testing.T) {
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "f", "    include: [\"e*\", \"write_*\", big]\n    exclude: [big]\n"), Options{})
	ts := tools(t, m, "f")
	var names []string
	for n := range ts {
		names = append(names, n)
	}
	if len(ts) != 2 || ts["f__echo"].Name == "" || ts["f__write_note"].Name == "" {
		t.Errorf("tools = %v, want f__echo and f__write_note", names)
	}
}

func TestPolicy(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, _ := setup(t, "servers:\n"+
		httpEntry(hs.URL, "plain", "")+
		httpEntry(hs.URL, "strict", "    policy: {echo: ask, \"write_*\": auto}\n"), Options{})
	ts := tools(t, m, "plain", "strict")
	for name, want := range map[string]string{
		"plain__echo":        PolicyAuto, // readOnlyHint
		"plain__write_note":  PolicyAsk,  // default
		"plain__big":         PolicyAuto,
		"strict__echo":       PolicyAsk, // config beats the hint
		"strict__write_note": PolicyAuto,
	} {
		if got := get(t, ts, name).Policy; got != want {
			t.Errorf("%s policy = %s, want %s", name, got, want)
		}
	}
}

func TestBigResultCapped(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "s", "")+httpEntry(hs.URL, "h", ""), Options{})
	ts := tools(t, m, "s", "h")
	for _, n := range []string{"s__big", "h__big"} {
		r := call(t, get(t, ts, n), `{}`)
		if r.IsError || !r.Truncated || r.Bytes != mcptest.BigSize {
			t.Errorf("%s: IsError=%v Truncated=%v Bytes=%d", n, r.IsError, r.Truncated, r.Bytes)
		}
		if len(r.Text) > DefaultMaxResultBytes+100 || !strings.Contains(r.Text, "[result cut:") || !utf8.ValidString(r.Text) {
			t.Errorf("%s: %d bytes, valid=%v, tail %q", n, len(r.Text), utf8.ValidString(r.Text), r.Text[len(r.Text)-60:])
		}
	}
	// A smaller cap from the options.
	m2, _ := setup(t, "servers:\n"+httpEntry(hs.URL, "h", ""), Options{MaxResultBytes: 1000})
	r := call(t, get(t, tools(t, m2, "h"), "h__big"), `{}`)
	if !r.Truncated || len(r.Text) > 1100 {
		t.Errorf("cap 1000: %d bytes", len(r.Text))
	}
}

func TestHostileResult(t *testing.T) {
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "s", ""), Options{})
	ts := tools(t, m, "s")
	h := get(t, ts, "s__hostile")
	r := call(t, h, `{}`)
	if !utf8.ValidString(r.Text) || !utf8.ValidString(h.Description) || !strings.Contains(r.Text, mcptest.HostileText) {
		t.Errorf("hostile result %q, description %q", r.Text, h.Description)
	}
	// The fake approval text changes no policy.
	ts = tools(t, m, "s")
	if p := get(t, ts, "s__write_note").Policy; p != PolicyAsk {
		t.Errorf("write_note policy after hostile result = %s", p)
	}
}

func TestHangTimesOut(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, _ := setup(t, "servers:\n"+
		stdioEntry(t, "s", "    timeout: 300ms\n")+httpEntry(hs.URL, "h", "    timeout: 300ms\n"), Options{})
	ts := tools(t, m, "s", "h")
	for _, srv := range []string{"s", "h"} {
		start := time.Now()
		r := call(t, get(t, ts, srv+"__hang"), `{}`)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s hang took %s", srv, took)
		}
		if !r.IsError || !strings.Contains(r.Text, "no answer within 300ms") {
			t.Errorf("%s hang = %+v", srv, r)
		}
		// The session was dropped; the next call reconnects at once.
		if r := call(t, get(t, ts, srv+"__echo"), `{"text":"back"}`); r.IsError || r.Text != "back" {
			t.Errorf("%s echo after hang = %+v", srv, r)
		}
	}
}

func TestCallerCancelIsNotAServerFailure(t *testing.T) {
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "s", ""), Options{})
	ts := tools(t, m, "s")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := get(t, ts, "s__hang").Call(ctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled call: err = %v, want the context's error", err)
	}
	c := m.conns["s"]
	c.mu.Lock()
	failures := c.shared.failures
	c.mu.Unlock()
	if failures != 0 {
		t.Errorf("failures = %d after the caller gave up, want 0", failures)
	}
}

func pidOf(t *testing.T, tl Tool) int {
	t.Helper()
	r := call(t, tl, `{}`)
	pid, err := strconv.Atoi(r.Text)
	if err != nil {
		t.Fatalf("pid result %+v", r)
	}
	return pid
}

// alive tells whether pid is still a process (a zombie counts) after
// giving it up to 3s to go away.
func alive(pid int) bool {
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func TestCrashMidCallReconnects(t *testing.T) {
	m, logs := setup(t, "servers:\n"+stdioEntry(t, "s", ""), Options{})
	ts := tools(t, m, "s")
	pid1 := pidOf(t, get(t, ts, "s__pid"))
	r := call(t, get(t, ts, "s__crash"), `{}`)
	if !r.IsError || !strings.Contains(r.Text, "reconnected") {
		t.Errorf("crash = %+v", r)
	}
	if r := call(t, get(t, ts, "s__echo"), `{"text":"again"}`); r.IsError || r.Text != "again" {
		t.Errorf("echo after crash = %+v", r)
	}
	pid2 := pidOf(t, get(t, ts, "s__pid"))
	if pid1 == pid2 {
		t.Errorf("same pid %d after crash", pid1)
	}
	if alive(pid1) {
		t.Errorf("crashed server %d still there", pid1)
	}
	if !strings.Contains(logs.String(), "mcp server failed") {
		t.Errorf("no failure logged: %s", logs)
	}
}

func TestCloseStopsStdioServers(t *testing.T) {
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "a", "")+stdioEntry(t, "b", ""), Options{})
	ts := tools(t, m, "a", "b")
	pids := []int{pidOf(t, get(t, ts, "a__pid")), pidOf(t, get(t, ts, "b__pid"))}
	for _, p := range pids {
		if syscall.Kill(p, 0) != nil {
			t.Fatalf("server %d not running before Close", p)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("server %d still running after Close", p)
		}
	}
	if _, err := get(t, ts, "a__echo").Call(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: %v, want ErrClosed", err)
	}
}

// deadURL is a loopback address nobody listens on.
func deadURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

func TestUnreachableHTTPServer(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	dead := deadURL(t)
	y := "servers:\n" + httpEntry(hs.URL, "h", "    timeout: 2s\n") +
		httpEntry(dead, "dead", "    timeout: 2s\n    headers: {X-Token: \"${MCP_SECRET}\"}\n")
	m, logs := setup(t, y, Options{BackoffBase: time.Hour})
	list, probs := m.Tools(context.Background(), []string{"dead", "h"})
	if len(list) == 0 || !hasProblem(probs, "dead", "connect") {
		t.Errorf("Tools: %d tools, problems %v", len(list), probs)
	}
	// A server that goes away mid-session gives error results.
	echo := get(t, tools(t, m, "h"), "h__echo")
	hs.Close()
	r := call(t, echo, `{"text":"x"}`)
	if !r.IsError {
		t.Errorf("echo to a closed server = %+v", r)
	}
	// After repeated failures the server is left alone until the backoff ends.
	_, _ = m.Tools(context.Background(), []string{"dead"})
	_, probs = m.Tools(context.Background(), []string{"dead"})
	if !hasProblem(probs, "dead", "next try in") {
		t.Errorf("third try: %v, want a backoff problem", probs)
	}
	cfg, _, _ := ParseConfig([]byte(y), envOf(map[string]string{"MCP_SECRET": secret}))
	reps := Check(context.Background(), cfg, nil)
	if len(reps) != 2 || reps[0].Name != "h" || reps[0].Err == nil || reps[1].Name != "dead" || reps[1].Err == nil {
		t.Errorf("Check = %+v", reps)
	}
	if strings.Contains(fmt.Sprintf("%+v", reps), secret) || strings.Contains(logs.String(), secret) {
		t.Error("secret leaked")
	}
}

func TestBackoffSparesAFailingServer(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	// One shared session (identity service: the server asks for no
	// authorization).
	m, _ := setup(t, "servers:\n"+httpEntry(hs.URL, "h", "    identity: service\n"), Options{BackoffBase: time.Hour})
	tools(t, m, "h")
	hs.Close()
	c := m.conns["h"]
	for range 5 {
		_, _ = m.Tools(context.Background(), []string{"h"})
		c.mu.Lock()
		c.tools = nil // force a list each round
		c.mu.Unlock()
	}
	c.mu.Lock()
	failures := c.shared.failures
	c.mu.Unlock()
	// One failure drops the session (1), the immediate reconnect fails (2),
	// then the backoff holds every later try.
	if failures != 2 {
		t.Errorf("failures = %d after 5 tries, want 2", failures)
	}
}

func TestInvalidSchemaSkipped(t *testing.T) {
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "s", ""), Options{})
	list, probs := m.Tools(context.Background(), []string{"s"})
	for _, tl := range list {
		if tl.Remote() == "bad_schema" {
			t.Error("bad_schema listed")
		}
	}
	if len(list) < 5 || !hasProblem(probs, "s", `"bad_schema" left out: invalid input schema`) {
		t.Errorf("%d tools, problems %v", len(list), probs)
	}
	reps := Check(context.Background(), m.cfg, nil)
	if len(reps) != 1 || reps[0].Err != nil || len(reps[0].Tools) != len(list) || !hasProblem(reps[0].Problems, "s", "bad_schema") {
		t.Errorf("Check = %+v", reps)
	}
}

func TestUnknownAndDisabledServers(t *testing.T) {
	y := "servers:\n" + stdioEntry(t, "s", "") +
		"  - name: needs\n    transport: stdio\n    command: x\n    env: {T: {env: NOT_SET_ANYWHERE}}\n" +
		"  - name: gone\n    transport: stdio\n    command: /nonexistent/mcp-server\n"
	cfg, cprobs, err := ParseConfig([]byte(y), envOf(nil))
	if err != nil || !hasProblem(cprobs, "needs", "NOT_SET_ANYWHERE") {
		t.Fatalf("config: %v %v", err, cprobs)
	}
	m := NewManager(cfg, Options{Logger: discardLogger, ListBudget: time.Minute})
	defer m.Close()
	list, probs := m.Tools(context.Background(), []string{"s", "nope", "needs", "gone"})
	if len(list) == 0 || !hasProblem(probs, "nope", "no such server") || !hasProblem(probs, "needs", "disabled") ||
		!hasProblem(probs, "gone", "connect") {
		t.Errorf("%d tools, problems %v", len(list), probs)
	}
	reps := Check(context.Background(), cfg, cprobs)
	byName := map[string]ServerReport{}
	for _, r := range reps {
		byName[r.Name] = r
	}
	if byName["s"].Err != nil || byName["gone"].Err == nil || byName["needs"].Err == nil ||
		!strings.Contains(byName["needs"].Err.Error(), "NOT_SET_ANYWHERE") {
		t.Errorf("Check = %+v", reps)
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	t.Setenv("MCP_SECRET", secret)                     // for the HTTP server, which runs in this process
	t.Setenv("AGENTBOT_PARENT_ONLY", "parent-private") // must not reach a stdio server
	hs := mcptest.NewHTTPServer(t)
	m, logs := setup(t, "servers:\n"+
		stdioEntry(t, "s", "    env: {MCP_SECRET: \"${MCP_SECRET}\"}\n")+
		httpEntry(hs.URL, "h", "    headers: {X-Token: {env: MCP_SECRET}}\n"), Options{})
	ts := tools(t, m, "s", "h")
	var seen []string
	// The secret reaches the servers (the results show it redacted, not empty).
	for _, c := range []struct{ tool, args, want string }{
		{"s__getenv", `{"name":"MCP_SECRET"}`, "[redacted]"},
		{"s__getenv", `{"name":"AGENTBOT_PARENT_ONLY"}`, ""},
		{"h__header", `{"name":"X-Token"}`, "[redacted]"},
	} {
		r := call(t, get(t, ts, c.tool), c.args)
		seen = append(seen, r.Text)
		if r.Text != c.want {
			t.Errorf("%s %s = %q, want %q", c.tool, c.args, r.Text, c.want)
		}
	}
	// Errors and stderr that quote the secret are scrubbed.
	for _, tl := range []string{"s__fail", "h__fail", "s__stderr"} {
		r := call(t, get(t, ts, tl), `{"name":"MCP_SECRET"}`)
		seen = append(seen, r.Text)
		if tl != "s__stderr" && (!r.IsError || !strings.Contains(r.Text, "failed with [redacted]")) {
			t.Errorf("%s = %+v", tl, r)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "value is [redacted]") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "value is [redacted]") {
		t.Errorf("stderr line not logged: %s", logs)
	}
	reps := Check(context.Background(), m.cfg, nil)
	all := strings.Join(seen, "\n") + logs.String() + fmt.Sprintf("%+v %#v", reps, m.cfg)
	if strings.Contains(all, secret) {
		t.Errorf("secret leaked into results, logs or Check: %s", all)
	}
}

func TestConcurrentCalls(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "s", "")+httpEntry(hs.URL, "h", ""), Options{})
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := []string{"s", "h"}[i%2]
			list, _ := m.Tools(context.Background(), []string{srv})
			for _, tl := range list {
				if tl.Remote() == "echo" {
					want := fmt.Sprint(i)
					r, err := tl.Call(context.Background(), json.RawMessage(`{"text":"`+want+`"}`))
					if err != nil || r.Text != want {
						errs <- fmt.Sprintf("%s call %d: %+v %v", srv, i, r, err)
					}
					return
				}
			}
			errs <- fmt.Sprintf("%s: no echo", srv)
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestCloseStopsWhatAStdioServerStarted(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := fmt.Sprintf("sleep 300 & echo $! > %s; exec %s", pidFile, mcptest.BuildStdio(t))
	y := fmt.Sprintf("servers:\n  - name: sh\n    transport: stdio\n    command: /bin/sh\n    args: [-c, %q]\n", script)
	m, _ := setup(t, y, Options{TerminateWait: 200 * time.Millisecond})
	pid := pidOf(t, get(t, tools(t, m, "sh"), "sh__pid"))
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	sleepPid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || syscall.Kill(sleepPid, 0) != nil {
		t.Fatalf("background child %q not running: %v", data, err)
	}
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Close took %s", took)
	}
	t.Logf("Close took %s", time.Since(start))
	// sleep is our grandchild; once killed, init reaps it.
	if alive(pid) || alive(sleepPid) {
		t.Errorf("after Close: server %d alive=%v, its child %d alive=%v", pid, alive(pid), sleepPid, alive(sleepPid))
	}
}

func TestHeadersNotSentOnRedirectElsewhere(t *testing.T) {
	var mu sync.Mutex
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Token"))
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, "first:"+r.Header.Get("X-Token"))
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	m, _ := setup(t, "servers:\n"+httpEntry(first.URL+"/mcp", "r", "    headers: {X-Token: {env: MCP_SECRET}}\n"), Options{})
	_, probs := m.Tools(context.Background(), []string{"r"})
	if !hasProblem(probs, "r", "connect") {
		t.Errorf("problems = %v", probs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 2 || got[0] != "first:"+secret {
		t.Fatalf("requests = %q, want the first with the token, then the redirect", got)
	}
	for _, h := range got[1:] {
		if !strings.HasPrefix(h, "first:") && h != "" {
			t.Errorf("redirected request carried X-Token")
		}
	}
}

// A server's notice that its tool list changed comes over stdio, and over
// HTTP on the standalone SSE stream; the next listing has the new tool.
func TestToolListChangedRefreshesTools(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, _ := setup(t, "servers:\n"+stdioEntry(t, "s", "")+httpEntry(hs.URL, "h", ""), Options{})
	for _, srv := range []string{"s", "h"} {
		ts := tools(t, m, srv)
		if _, ok := ts[srv+"__extra"]; ok {
			t.Fatalf("%s: extra listed before grow", srv)
		}
		if r := call(t, get(t, ts, srv+"__grow"), `{}`); r.Text != "grown" {
			t.Fatalf("%s: grow = %+v", srv, r)
		}
		listed := false
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !listed; time.Sleep(20 * time.Millisecond) {
			if tl, ok := tools(t, m, srv)[srv+"__extra"]; ok {
				listed = true
				if r := call(t, tl, `{}`); r.Text != "extra" {
					t.Errorf("%s: extra = %+v", srv, r)
				}
			}
		}
		if !listed {
			t.Errorf("%s__extra never listed after the server's list-changed notification", srv)
		}
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	cfg, _ := parse(t, "servers: [{name: s, transport: stdio, command: x}]", nil)
	m := NewManager(cfg, Options{Logger: discardLogger, BackoffBase: 100 * time.Millisecond, BackoffMax: time.Second})
	c := m.conns["s"]
	c.mu.Lock()
	defer c.mu.Unlock()
	for n, max := range []time.Duration{0, 100, 200, 400, 800, 1000, 1000} {
		before := time.Now()
		c.shared.fail("test")
		d := c.shared.nextTry.Sub(before)
		max *= time.Millisecond
		if d < max/2-time.Millisecond || d > max+10*time.Millisecond {
			t.Errorf("failure %d: delay %s, want %s..%s", n+1, d, max/2, max)
		}
	}
}

func TestZeroToolCall(t *testing.T) {
	if _, err := (Tool{}).Call(context.Background(), nil); err == nil {
		t.Error("call of a zero Tool: no error")
	}
}

// After an HTTP server restart our session is unknown to it (404): the
// first call, which never ran, is sent again on a new session, once.
func TestCallRetriedOnceAfterHTTPRestart(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, logs := setup(t, "servers:\n"+httpEntry(hs.URL, "h", ""), Options{})
	ts := tools(t, m, "h")
	if r := call(t, get(t, ts, "h__echo"), `{"text":"before"}`); r.IsError {
		t.Fatalf("before: %+v", r)
	}
	hs.Restart()
	if r := call(t, get(t, ts, "h__write_note"), `{"text":"after"}`); r.IsError || r.Text != "saved" {
		t.Fatalf("after the restart: %+v\n%s", r, logs)
	}
	if n := strings.Count(logs.String(), "lost our session"); n != 1 {
		t.Fatalf("%d retries logged:\n%s", n, logs)
	}
	// A call the server answered with an error is not sent again.
	if r := call(t, get(t, ts, "h__fail"), `{"name":"x"}`); !r.IsError || strings.Count(logs.String(), "lost our session") != 1 {
		t.Fatalf("a failed call = %+v", r)
	}
}

// Progress gives a call its timeout again, up to max_timeout: ten steps
// of 100ms finish under a 300ms timeout, each step reported; with a
// max_timeout of 500ms the same call is cut, and said to be.
func TestProgressExtendsTheTimeoutUpToMax(t *testing.T) {
	hs := mcptest.NewHTTPServer(t)
	m, _ := setup(t, "servers:\n"+httpEntry(hs.URL, "h", "    timeout: 300ms\n    max_timeout: 5s\n")+
		httpEntry(hs.URL, "short", "    timeout: 300ms\n    max_timeout: 500ms\n"), Options{})
	ts := tools(t, m, "h", "short")
	var lines []string
	var mu sync.Mutex
	r, err := get(t, ts, "h__steps").CallProgress(context.Background(), nil, func(s string) {
		mu.Lock()
		lines = append(lines, s)
		mu.Unlock()
	})
	if err != nil || r.IsError || r.Text != "ten steps done" {
		t.Fatalf("steps = %+v %v", r, err)
	}
	mu.Lock()
	if len(lines) < 8 || lines[0] != "steps: step 1 (10%)" {
		t.Errorf("progress = %q", lines)
	}
	mu.Unlock()
	r = call(t, get(t, ts, "short__steps"), `{}`)
	if !r.IsError || !strings.Contains(r.Text, "not done within max_timeout 500ms") || !strings.Contains(r.Text, "keeps its state") {
		t.Fatalf("over max_timeout = %+v", r)
	}
}

// A server starting cold (never listed, never failed) is waited for up to
// its timeout, not the budget; then its list is served from cache. One
// that fails from the start is known to be failing once its first try
// failed: it then costs a turn only the budget.
func TestColdStartWaitsUpToTheTimeout(t *testing.T) {
	srv := mcptest.BuildStdio(t)
	y := "servers:\n" +
		"  - name: slow\n    transport: stdio\n    command: sh\n    args: [-c, \"sleep 0.6; exec " + srv + "\"]\n    timeout: 10s\n" +
		"  - name: hung\n    transport: stdio\n    command: sleep\n    args: [\"3600\"]\n    timeout: 700ms\n"
	m, _ := setup(t, y, Options{ListBudget: 100 * time.Millisecond, TerminateWait: 200 * time.Millisecond})
	start := time.Now()
	list, probs := m.Tools(context.Background(), []string{"slow"})
	if took := time.Since(start); took < 500*time.Millisecond || len(list) == 0 {
		t.Fatalf("cold start: %s, %d tools, problems %v", took, len(list), probs)
	}
	start = time.Now()
	if list, _ := m.Tools(context.Background(), []string{"slow"}); len(list) == 0 || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("cached: %d tools in %s", len(list), time.Since(start))
	}
	// The hung server is waited for once; its failure is recorded when
	// the SDK has closed the process (stdin closed, TerminateWait, a
	// signal), and until then its listing is not waited for again.
	start = time.Now()
	_, probs = m.Tools(context.Background(), []string{"hung"})
	if took := time.Since(start); took < 600*time.Millisecond || len(probs) == 0 || !probs[0].Unavailable {
		t.Fatalf("cold hung server: %s, problems %v", took, probs)
	}
	for i := range 3 {
		start = time.Now()
		_, probs = m.Tools(context.Background(), []string{"hung"})
		if took := time.Since(start); took > 400*time.Millisecond || len(probs) == 0 || !probs[0].Unavailable {
			t.Fatalf("hung server known to hang: %s, problems %v", took, probs)
		}
		if i == 0 {
			time.Sleep(time.Second) // its failure recorded, it is known to be failing
		}
	}
	c := m.conns["hung"]
	c.mu.Lock()
	cold := c.shared.cold()
	c.mu.Unlock()
	if cold {
		t.Error("the hung server is still taken for one starting cold")
	}
}
