package main

import (
	"context"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
)

// agentbotGoroutines lists the goroutines running agentbot or library code
// that serve starts, leaving out the test runtime's and the fakes' own.
func agentbotGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		// Server-side connections belong to the fakes' servers; a leak of
		// serve's own HTTP server shows as its Serve goroutine.
		if strings.Contains(g, "net/http.(*conn).serve") {
			continue
		}
		if strings.Contains(g, "agentbot/bot/fakeslack") || strings.Contains(g, "agentbot/engine/fakemodel") ||
			strings.Contains(g, "net/http/httptest") || strings.Contains(g, "testing.") && !strings.Contains(g, "agentbot/cmd/agentbot.run") {
			continue
		}
		if strings.Contains(g, "agentbot/") || strings.Contains(g, "slack-go") || strings.Contains(g, "net/http.(*Server)") || strings.Contains(g, "bbolt") {
			out = append(out, g)
		}
	}
	return out
}

// No goroutine outlives serve: the socket, intake, thread workers,
// SIGHUP handler, retention loop, HTTP server and control socket all stop.
func TestNoGoroutineOutlivesServe(t *testing.T) {
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	before := agentbotGoroutines()
	vars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": t.TempDir(), "AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_SESSION_TTL": "24h",
		"AGENTBOT_HTTP_ADDR": "127.0.0.1:0",
	}
	logs, stop := serveInProcess(t, vars)
	opsWait(t, "serve to start", func() bool { return strings.Contains(logs.String(), "agentbot starting") })
	if len(agentbotGoroutines()) <= len(before) {
		t.Fatal("serve started no goroutines: the test would not see a leak")
	}
	stop()
	deadline := time.Now().Add(10 * time.Second)
	var left []string
	for {
		left = agentbotGoroutines()
		if len(left) <= len(before) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > len(before) {
		t.Fatalf("%d goroutines outlive serve:\n\n%s", len(left)-len(before), strings.Join(left, "\n\n"))
	}
}

// serve stops what it started on its error paths too: here the HTTP
// address is taken, after the SIGHUP handler, the retention loop and the
// control socket have started.
func TestNoGoroutineOutlivesAFailedServe(t *testing.T) {
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	vars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": t.TempDir(), "AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_SESSION_TTL": "24h",
		"AGENTBOT_HTTP_ADDR": taken.Addr().String(),
	}
	before := agentbotGoroutines()
	// The context stays live until the end: serve itself must stop what
	// it started, not the caller's cancel.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr strings.Builder
	code := run(ctx, &env{args: []string{"serve"}, stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderr,
		getenv: func(k string) string { return vars[k] }})
	if code != 1 || !strings.Contains(stderr.String(), "listen on AGENTBOT_HTTP_ADDR") {
		t.Fatalf("serve exit %d, want 1 and the listen error:\n%s", code, stderr.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	var left []string
	for {
		left = agentbotGoroutines()
		if len(left) <= len(before) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(left) > len(before) {
		t.Fatalf("%d goroutines outlive serve:\n\n%s", len(left)-len(before), strings.Join(left, "\n\n"))
	}
}
