package engine_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/mcptest"
)

// A server that never answers costs the first turn one cold wait (up to
// its connect timeout: it never listed its tools in this process), every
// later turn only the listing budget, and the user is told once per
// session that its tools are unavailable; the other server's tools are
// offered all the same.
func TestUnavailableServerToldOnce(t *testing.T) {
	web := mcptest.NewHTTPServer(t)
	y := webConfig(web.URL, "") + "  - name: hung\n    transport: stdio\n    command: sleep\n    args: [\"3600\"]\n    timeout: 1s\n"
	cfg, probs, err := mcp.ParseConfig([]byte(y), func(string) string { return "" })
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	mgr := mcp.NewManager(cfg, mcp.Options{ListBudget: 200 * time.Millisecond})
	t.Cleanup(func() { mgr.Close() })
	mgr.Warm([]string{"web", "hung"})
	mgr.ToolsWait(context.Background(), []string{"web"})
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.ExternalTools = mgr.SessionTools(func(*engine.Session) []string { return []string{"hung", "web"} }, nil)
	}})
	s, _ := h.start("t/hung", "product-lead")
	for i := range 3 {
		h.fm.Enqueue(fakemodel.Reply{Text: "ok"})
		start := time.Now()
		h.turn(s, fmt.Sprintf("message %d", i))
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("turn %d took %s", i, took)
		}
		if names := toolNamesOf(h.fm.Requests()[i]); !slices.Contains(names, "web__echo") {
			t.Fatalf("turn %d offers %v", i, names)
		}
	}
	notices := h.eventsOf(engine.EventNotice)
	if len(notices) != 1 || !strings.Contains(notices[0].Text, "MCP server hung are unavailable") {
		t.Fatalf("notices = %+v", notices)
	}
}

// The audio a tool returns is saved as a document and shared; two calls
// in one response get two documents, never one over the other.
func TestToolFilesSavedAsDocuments(t *testing.T) {
	web := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(web.URL, "    policy: {audio: auto}\n"))
	s, _ := h.start("t/audio", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
		{ID: "a1", Name: "web__audio", Arguments: `{}`}, {ID: "a2", Name: "web__audio", Arguments: `{}`}}},
		fakemodel.Reply{Text: "ok"})
	h.turn(s, "beep twice")
	var saved []string
	for _, ev := range h.eventsOf(engine.EventOutput) {
		saved = append(saved, ev.Output.Path)
		if data, err := os.ReadFile(ev.HostPath); err != nil || string(data) != string(mcptest.Wav) {
			t.Errorf("%s on disk: %d bytes, %v", ev.Output.Path, len(data), err)
		}
	}
	slices.Sort(saved)
	if !slices.Equal(saved, []string{"audio-1-2.wav", "audio-1.wav"}) {
		t.Fatalf("saved = %v", saved)
	}
	req := h.fm.Requests()[1]
	for _, id := range []string{"a1", "a2"} {
		if got, _ := resultOf(t, req, id)["result"].(string); !strings.HasPrefix(got, "a beep\n[audio/wav, 52 bytes: saved to /outputs/audio-1") {
			t.Errorf("%s = %q", id, got)
		}
	}
}
