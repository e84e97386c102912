package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp/connect/protectedtest"
)

// loopbackLink finds the link the chat prints for a connection.
var loopbackLink = regexp.MustCompile(`(?m)^\s+(http://127\.0\.0\.1:\d+/\S+)$`)

// agentbot chat with a protected MCP server (identity user, the real
// TypeScript SDK server behind oidc-provider): the first call asks the
// person at the terminal to open a link; the authorization server sends
// the browser back to the loopback address the chat serves (RFC 8252),
// and the call then acts as that person. With the secret key the token is
// kept, sealed, for the next chat, which asks nothing.
func TestChatConnectsThroughLoopback(t *testing.T) {
	ps := protectedtest.Start(t)
	fm := fakemodel.NewTB(t)
	dir := t.TempDir()
	files := map[string]string{
		"bundles/ev/bundle.yaml":      "type: bundle\nname: ev\nagents:\n  - id: toolie\n    file: agents/toolie.md\n    entry_point: true\n    mcp: [tracker]\n",
		"bundles/ev/agents/toolie.md": toolAgent,
		"mcp.yaml":                    "servers:\n" + ps.Entry("tracker", ""),
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	vars := chatVars(t, fm)
	vars["AGENTBOT_BUNDLES"] = filepath.Join(dir, "bundles")
	vars["AGENTBOT_MCP_CONFIG"] = filepath.Join(dir, "mcp.yaml")
	vars["AGENTBOT_SECRET_KEY"] = hex.EncodeToString(key)
	vars["USER"] = "ada"

	fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "tracker__connect_account", Arguments: `{}`}}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "w1", Name: "tracker__whoami", Arguments: `{}`}}},
		fakemodel.Reply{Text: "You are ada."})
	var out, errb syncBuffer
	done := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		done <- run(ctx, &env{args: []string{"chat", "--agent", "toolie", "--session", "s1"}, stdin: strings.NewReader("who am I at the tracker?\n"),
			stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }})
	}()
	var link string
	waitUntil(t, "the connect link", 30*time.Second, func() bool {
		if m := loopbackLink.FindStringSubmatch(out.String()); m != nil {
			link = m[1]
			return true
		}
		return false
	})
	status, page := protectedtest.Browse(t, link, "ada")
	if status != http.StatusOK || !strings.Contains(page, "Connected") {
		t.Fatalf("the browser: %d %s", status, page)
	}
	if code := <-done; code != 0 {
		t.Fatalf("chat exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	contains(t, "chat", out.String(), "connected to tracker")
	contains(t, "chat", out.String(), "You are ada.")
	calls := ps.Calls()
	if len(calls) == 0 || calls[len(calls)-1].Tool != "whoami" || calls[len(calls)-1].Subject != "ada" {
		t.Fatalf("the server's calls: %+v", calls)
	}

	// The next chat finds the token, sealed in the store: no link.
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "w2", Name: "tracker__whoami", Arguments: `{}`}}},
		fakemodel.Reply{Text: "Still ada."})
	r := runCmd(t, vars, "again?\n", "chat", "--agent", "toolie", "--session", "s2")
	r.wantCode(t, 0)
	contains(t, "the second chat", r.stdout, "Still ada.")
	lacks(t, "the second chat", r.stdout, "Open this link")
	if c := ps.Calls(); c[len(c)-1].Subject != "ada" {
		t.Fatalf("the second chat's call: %+v", c[len(c)-1])
	}
}
