package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"agentbot/engine/mcp/mcptest"
)

// These tests run the official MCP reference servers from npm
// (engine/mcp/testdata/npm, installed by .ci/run): what they accept and
// send is the truth our fakes only imitate.

// refEntry is a config entry running a reference server over stdio.
func refEntry(t *testing.T, name, pkg, extra string, args ...string) string {
	return mcptest.ReferenceEntry(t, name, pkg, extra, args...)
}

// waitTools lists the servers until every tool in want is there (a
// server's conditional tools come after it is initialized).
func waitTools(t *testing.T, m *Manager, servers []string, want ...string) (map[string]Tool, []Problem) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, probs := m.Tools(context.Background(), servers)
		got := map[string]Tool{}
		for _, tl := range list {
			got[tl.Name] = tl
		}
		missing := ""
		for _, w := range want {
			if _, ok := got[w]; !ok {
				missing = w
			}
		}
		if missing == "" {
			return got, probs
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tool %s among %d; problems %v", missing, len(got), probs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// server-everything over stdio and streamable HTTP: echo and sums,
// progress that keeps a long call alive past its timeout, a tiny image as
// a file, resource links described and read through read_resource, and a
// task-only tool left out with a problem naming it.
func TestReferenceEverything(t *testing.T) {
	hs := mcptest.StartEverythingHTTP(t)
	y := "servers:\n" + refEntry(t, "ev", "server-everything", "    max_timeout: 1m\n", "stdio") +
		httpEntry(hs.URL, "evh", "    timeout: 20s\n")
	m, _ := setup(t, y, Options{})
	servers := []string{"ev", "evh"}
	ts, _ := waitTools(t, m, servers, "ev__echo", "evh__echo", "ev__read_resource", "evh__read_resource")
	for _, srv := range servers {
		if r := call(t, get(t, ts, srv+"__echo"), `{"message":"hi `+srv+`"}`); r.IsError || !strings.Contains(r.Text, "hi "+srv) {
			t.Errorf("%s echo = %+v", srv, r)
		}
		if r := call(t, get(t, ts, srv+"__get-sum"), `{"a":2,"b":40}`); r.IsError || !strings.Contains(r.Text, "42") {
			t.Errorf("%s get-sum = %+v", srv, r)
		}
		img := call(t, get(t, ts, srv+"__get-tiny-image"), `{}`)
		if img.IsError || len(img.Files) != 1 || img.Files[0].MIMEType != "image/png" || !strings.HasSuffix(img.Files[0].Name, ".png") ||
			string(img.Files[0].Data[1:4]) != "PNG" || strings.Contains(img.Text, "not shown") {
			t.Errorf("%s tiny image = text %q, %d files", srv, img.Text, len(img.Files))
		}
		links := call(t, get(t, ts, srv+"__get-resource-links"), `{"count":2}`)
		if links.IsError || strings.Count(links.Text, "[resource link demo://resource/dynamic/") != 2 ||
			!strings.Contains(links.Text, "text/plain") || !strings.Contains(links.Text, "name ") || !strings.Contains(links.Text, srv+"__read_resource") && !strings.Contains(links.Text, "read_resource") {
			t.Errorf("%s resource links = %q", srv, links.Text)
		}
		read := call(t, get(t, ts, srv+"__read_resource"), `{"uri":"demo://resource/dynamic/text/1"}`)
		if read.IsError || !strings.Contains(read.Text, "Resource 1") {
			t.Errorf("%s read_resource = %+v", srv, read)
		}
		if bad := call(t, get(t, ts, srv+"__read_resource"), `{}`); !bad.IsError || !strings.Contains(bad.Text, "uri") {
			t.Errorf("%s read_resource without uri = %+v", srv, bad)
		}
	}
	// The task-only tool comes after initialization; over stdio the
	// server says its list changed, and the tool is left out by name.
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, probs := m.Tools(context.Background(), []string{"ev"})
		if hasProblem(probs, "ev", `"simulate-research-query" left out: it must be called as an MCP task`) {
			for _, tl := range list {
				if tl.Remote() == "simulate-research-query" {
					t.Fatal("the task-only tool is offered")
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no problem for the task-only tool: %v", probs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A long operation reports progress: each notification reaches the
// caller as a status line and gives the call its timeout again, so a
// 3-second operation finishes under a 1.5s timeout; without progress
// (no steps for longer than the timeout) it would be cut.
func TestReferenceProgressExtendsTimeout(t *testing.T) {
	y := "servers:\n" + strings.Replace(refEntry(t, "ev", "server-everything", "    max_timeout: 1m\n", "stdio"), "timeout: 20s", "timeout: 1500ms", 1)
	m, _ := setup(t, y, Options{})
	ts, _ := waitTools(t, m, []string{"ev"}, "ev__trigger-long-running-operation")
	long := get(t, ts, "ev__trigger-long-running-operation")
	var mu sync.Mutex
	var lines []string
	r, err := long.CallProgress(context.Background(), []byte(`{"duration":3,"steps":10}`), func(s string) {
		mu.Lock()
		lines = append(lines, s)
		mu.Unlock()
	})
	if err != nil || r.IsError || !strings.Contains(r.Text, "Long running operation completed") {
		t.Fatalf("long operation = %+v %v", r, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The last notification may come after the answer (the go-sdk handles
	// notifications asynchronously), so it is not required.
	if len(lines) < 8 || lines[0] != "trigger-long-running-operation (10%)" || !strings.Contains(strings.Join(lines, "\n"), "(50%)") {
		t.Fatalf("progress lines = %q", lines)
	}
	// Two steps of 2s each leave the call without a sign of life for
	// longer than its timeout: it is cancelled, and as the server still
	// answers a ping, its session (and state) is kept.
	pid := m.conns["ev"].shared.sess.cmd.Process.Pid
	r, err = long.CallProgress(context.Background(), []byte(`{"duration":4,"steps":2}`), nil)
	if err != nil || !r.IsError || !strings.Contains(r.Text, "no answer within 1.5s") || !strings.Contains(r.Text, "keeps its state") {
		t.Fatalf("idle call = %+v %v", r, err)
	}
	if r := call(t, get(t, ts, "ev__get-sum"), `{"a":1,"b":1}`); r.IsError || m.conns["ev"].shared.sess.cmd.Process.Pid != pid {
		t.Fatalf("after the cancelled call: %+v (server restarted: %v)", r, m.conns["ev"].shared.sess.cmd.Process.Pid != pid)
	}
}

// A 9 MB file read through server-filesystem comes as text and again as
// structuredContent, about 18 MB on the wire, over the go-sdk's 16 MiB
// frame limit: it is read whole, capped with a note, and the server keeps
// working. The same server gets approval (write_file is not read-only).
func TestReferenceFilesystemNineMegabytes(t *testing.T) {
	root := t.TempDir()
	line := strings.Repeat("0123456789abcdef", 4) + "\n"
	big := strings.Repeat(line, 9_000_000/len(line))
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := setup(t, "servers:\n"+strings.Replace(refEntry(t, "fs", "server-filesystem", "", root), "timeout: 20s", "timeout: 2m", 1), Options{})
	ts, _ := waitTools(t, m, []string{"fs"}, "fs__read_text_file", "fs__write_file")
	if p := get(t, ts, "fs__write_file").Policy; p != PolicyAsk {
		t.Errorf("write_file policy = %s", p)
	}
	if p := get(t, ts, "fs__read_text_file").Policy; p != PolicyAuto {
		t.Errorf("read_text_file policy = %s", p)
	}
	t0 := time.Now()
	r := call(t, get(t, ts, "fs__read_text_file"), fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "big.txt")))
	t.Logf("9 MB read in %s", time.Since(t0))
	if r.IsError || !r.Truncated || r.Bytes != len(big) || !strings.HasPrefix(r.Text, line) ||
		!strings.Contains(r.Text, fmt.Sprintf("[result cut: %d of %d bytes shown]", DefaultMaxResultBytes, len(big))) {
		t.Fatalf("9 MB read = error %v, truncated %v, %d bytes, tail %q", r.IsError, r.Truncated, r.Bytes, r.Text[max(0, len(r.Text)-80):])
	}
	if r := call(t, get(t, ts, "fs__list_allowed_directories"), `{}`); r.IsError || !strings.Contains(r.Text, filepath.Base(root)) {
		t.Fatalf("after the big read: %+v", r)
	}
	// Over our own frame limit the answer is refused with a clear error,
	// and the server is reconnected.
	if err := os.WriteFile(filepath.Join(root, "mid.txt"), []byte(big[:2<<20]), 0o644); err != nil {
		t.Fatal(err)
	}
	small, _ := setup(t, "servers:\n"+refEntry(t, "fs", "server-filesystem", "", root), Options{MaxFrameBytes: 1 << 20})
	ts, _ = waitTools(t, small, []string{"fs"}, "fs__read_text_file")
	r = call(t, get(t, ts, "fs__read_text_file"), fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "mid.txt")))
	if !r.IsError || !strings.Contains(r.Text, "larger than 1 MiB") {
		t.Fatalf("read over the frame limit = %+v", r)
	}
	if r := call(t, get(t, ts, "fs__list_allowed_directories"), `{}`); r.IsError {
		t.Fatalf("after the refused read: %+v", r)
	}
}

// server-memory and server-sequential-thinking list and answer; memory
// keeps its graph between calls of one session.
func TestReferenceMemoryAndThinking(t *testing.T) {
	mem := filepath.Join(t.TempDir(), "memory.jsonl")
	y := "servers:\n" + refEntry(t, "mem", "server-memory", "    env: {MEMORY_FILE_PATH: \"${MEM_FILE}\"}\n") +
		refEntry(t, "think", "server-sequential-thinking", "")
	cfg, probs, err := ParseConfig([]byte(y), envOf(map[string]string{"MEM_FILE": mem}))
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	m := NewManager(cfg, Options{Logger: discardLogger, ListBudget: time.Minute})
	defer m.Close()
	ts, _ := waitTools(t, m, []string{"mem", "think"}, "mem__create_entities", "mem__read_graph", "think__sequentialthinking")
	r := call(t, get(t, ts, "mem__create_entities"), `{"entities":[{"name":"agentbot","entityType":"project","observations":["runs agents in Slack"]}]}`)
	if r.IsError {
		t.Fatalf("create_entities = %+v", r)
	}
	if r := call(t, get(t, ts, "mem__read_graph"), `{}`); r.IsError || !strings.Contains(r.Text, "runs agents in Slack") {
		t.Fatalf("read_graph = %+v", r)
	}
	r = call(t, get(t, ts, "think__sequentialthinking"), `{"thought":"first","nextThoughtNeeded":false,"thoughtNumber":1,"totalThoughts":1}`)
	if r.IsError || !strings.Contains(r.Text, "thoughtNumber") {
		t.Fatalf("sequentialthinking = %+v", r)
	}
}

// After server-everything over HTTP restarts, it no longer knows our
// session and refuses the next call before running it ("Bad Request"):
// the call is sent once more on a new session and succeeds.
func TestReferenceHTTPRestart(t *testing.T) {
	hs := mcptest.StartEverythingHTTP(t)
	m, logs := setup(t, "servers:\n"+httpEntry(hs.URL, "evh", "    timeout: 20s\n"), Options{})
	ts, _ := waitTools(t, m, []string{"evh"}, "evh__echo")
	echo := get(t, ts, "evh__echo")
	if r := call(t, echo, `{"message":"before"}`); r.IsError {
		t.Fatalf("before the restart: %+v", r)
	}
	hs.Restart()
	if r := call(t, echo, `{"message":"after"}`); r.IsError || !strings.Contains(r.Text, "after") {
		t.Fatalf("first call after the restart = %+v\n%s", r, logs)
	}
	if !strings.Contains(logs.String(), "lost our session") {
		t.Errorf("no retry logged:\n%s", logs)
	}
}

// A server that never answers is waited for once, cold, up to its
// timeout; known to hang, it then costs a turn at most the listing
// budget, every turn, while a healthy server's tools are offered; once
// the hung server answered before, its last tools are served with their
// age.
func TestHangingServerCostsOnlyTheBudget(t *testing.T) {
	y := "servers:\n" + refEntry(t, "ev", "server-everything", "", "stdio") +
		"  - name: hung\n    transport: stdio\n    command: sleep\n    args: [\"3600\"]\n    timeout: 1s\n"
	m, _ := setup(t, y, Options{ListBudget: 150 * time.Millisecond})
	m.Warm([]string{"ev", "hung"})
	waitTools(t, m, []string{"ev"}, "ev__echo")
	start := time.Now()
	if _, probs := m.Tools(context.Background(), []string{"hung"}); time.Since(start) > 3*time.Second || !hasProblem(probs, "hung", "not answering") {
		t.Fatalf("cold hung server: %s, problems %v", time.Since(start), probs)
	}
	for range 3 {
		start := time.Now()
		list, probs := m.Tools(context.Background(), []string{"hung", "ev"})
		took := time.Since(start)
		if took > 500*time.Millisecond { // the budget is 150ms; generous for a loaded CI machine
			t.Fatalf("listing took %s", took)
		}
		if len(list) < 10 || !hasProblem(probs, "hung", "") {
			t.Fatalf("%d tools, problems %v", len(list), probs)
		}
		for _, p := range probs {
			if p.Server == "hung" && !p.Unavailable {
				t.Errorf("problem not marked unavailable: %+v", p)
			}
		}
	}
	// A server that stops answering (here: stopped by a signal) while its
	// list is to be refreshed is served from its last list, with its age.
	c := m.conns["ev"]
	c.mu.Lock()
	pid := c.shared.sess.cmd.Process.Pid
	c.knownAt = time.Now().Add(-3 * time.Minute)
	c.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	c.stale.Store(true)
	start = time.Now()
	list, probs := m.Tools(context.Background(), []string{"ev"})
	if took := time.Since(start); took > 2*time.Second || len(list) < 10 || !hasProblem(probs, "ev", "serving its tool list from 3m0s ago") {
		t.Fatalf("took %s, %d tools, problems %v", took, len(list), probs)
	}
}

// The first turn of a fresh process gets the tools of a reference server
// that takes a second or two to start, with the default budget: a server
// that has never listed its tools is waited for up to its timeout.
func TestReferenceColdStartGetsTools(t *testing.T) {
	m, _ := setup(t, "servers:\n"+refEntry(t, "ev", "server-everything", "", "stdio"), Options{ListBudget: DefaultListBudget})
	start := time.Now()
	list, probs := m.Tools(context.Background(), []string{"ev"})
	t.Logf("first listing took %s", time.Since(start))
	if len(list) < 10 || hasProblem(probs, "ev", "not answering") {
		t.Fatalf("first turn: %d tools, problems %v", len(list), probs)
	}
}
