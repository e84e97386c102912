package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/mcptest"
)

// refServer is a config entry running an MCP reference server from npm
// over stdio.
func refServer(t testing.TB, name, pkg string, args ...string) string {
	return mcptest.ReferenceEntry(t, name, pkg, "", args...)
}

func toolNamesOf(req fakemodel.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// Nine server-filesystem servers offer 126 tools, over OpenAI's 128 with
// the built-in ones (the fake model refuses such a request as OpenAI
// does). Each request stays under the limit: the built-in tools, the
// tools most relevant to the message, and find_tools, which offers the
// ones it finds from the next step on; a tool not offered still runs when
// called by name.
func TestMCPManyToolsChosenPerTurn(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.md"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	y := "servers:\n"
	for i := 1; i <= 9; i++ {
		y += refServer(t, fmt.Sprintf("fs%d", i), "server-filesystem", root)
	}
	h, mgr := mcpHarness(t, y)
	all, probs := mgr.Tools(context.Background(), []string{"fs1", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9"})
	if len(all) != 126 {
		t.Fatalf("%d tools listed (problems %v)", len(all), probs)
	}
	s, _ := h.start("t/many", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "f1", Name: "find_tools", Arguments: `{"query":"list directory with sizes"}`}}})
	// The second answer calls a tool the second request does not offer.
	h.fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		offered := toolNamesOf(req)
		for _, tl := range all {
			if req.N == 2 && !slices.Contains(offered, tl.Name) && tl.Policy == mcp.PolicyAuto {
				return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: tl.Name, Arguments: fmt.Sprintf(`{"path":%q}`, root)}}}
			}
		}
		return fakemodel.Reply{Text: "done"}
	})
	if r := h.turn(s, "Please move the file notes.md into the archive folder"); r.Text != "done" {
		t.Fatalf("turn = %+v", r)
	}
	reqs := h.fm.Requests()
	first, second := toolNamesOf(reqs[0]), toolNamesOf(reqs[1])
	for i, names := range [][]string{first, second} {
		if len(names) > engine.MaxToolDefinitions || !slices.Contains(names, "find_tools") || !slices.Contains(names, "read_file") {
			t.Fatalf("request %d offers %d tools: %v", i+1, len(names), names)
		}
	}
	// 126 MCP tools and the built-in ones make 131: the four least
	// relevant to moving a file are left out of the first request.
	if !slices.Contains(first, "fs9__move_file") || slices.Contains(first, "fs9__list_directory_with_sizes") {
		t.Errorf("first request: move_file should be offered, list_directory_with_sizes not: %v", first)
	}
	if !slices.Contains(second, "fs9__list_directory_with_sizes") {
		t.Errorf("found tools not offered next: %v", second)
	}
	found, _ := resultOf(t, reqs[1], "f1")["result"].(string)
	if !strings.Contains(found, "fs9__list_directory_with_sizes") {
		t.Errorf("find_tools = %q", found)
	}
	// The server ran the call (its answer, even a refusal of the
	// arguments, is no "unknown tool").
	info := resultOf(t, reqs[2], "c1")
	if rec, ok := auditOf(s, "c1"); !ok || !strings.HasPrefix(rec.Server, "fs") || strings.Contains(fmt.Sprint(info), "unknown tool") {
		t.Errorf("call of a tool not offered = %v (audit %+v)", info, rec)
	}
}

// Through the engine: a long operation's progress reaches the user as
// the call's status (Slack's task card and the terminal show
// EventToolStart's Status); an image from server-everything and audio
// from the test server are saved as documents and shared; a server that
// does not answer costs the first turn its timeout (it starts cold), then
// only the listing budget, and the user is told once that its tools are
// unavailable.
func TestMCPProgressMediaAndUnavailableServer(t *testing.T) {
	web := mcptest.NewHTTPServer(t)
	y := "servers:\n" + refServer(t, "ev", "server-everything", "stdio") + webConfig(web.URL, "    policy: {audio: auto}\n")[len("servers:\n"):] +
		"  - name: hung\n    transport: stdio\n    command: sleep\n    args: [\"3600\"]\n    timeout: 1s\n"
	cfg, probs, err := mcp.ParseConfig([]byte(y), func(string) string { return "" })
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	mgr := mcp.NewManager(cfg, mcp.Options{ListBudget: 300 * time.Millisecond})
	t.Cleanup(func() { mgr.Close() })
	names := []string{"ev", "web", "hung"}
	mgr.Warm(names)
	_, probs = mgr.ToolsWait(context.Background(), []string{"ev", "web"})
	for _, p := range probs {
		if p.Unavailable {
			t.Fatalf("problems %v", probs)
		}
	}
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.ExternalTools = mgr.SessionTools(func(*engine.Session) []string { return names }, nil)
	}})
	s, _ := h.start("t/media", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			{ID: "p1", Name: "ev__trigger-long-running-operation", Arguments: `{"duration":0.9,"steps":3}`},
			{ID: "i1", Name: "ev__get-tiny-image", Arguments: `{}`},
			{ID: "a1", Name: "web__audio", Arguments: `{}`},
		}},
		fakemodel.Reply{Text: "done"},
	)
	start := time.Now()
	if r := h.turn(s, "show me"); r.Text != "done" {
		t.Fatalf("turn = %+v", r)
	}
	t.Logf("turn took %s", time.Since(start))
	var progress []string
	for _, ev := range h.eventsOf(engine.EventToolStart) {
		if ev.CallID == "p1" {
			progress = append(progress, ev.Status)
		}
	}
	if len(progress) < 3 || !strings.Contains(strings.Join(progress, "\n"), "trigger-long-running-operation (33%)") {
		t.Errorf("progress statuses = %q", progress)
	}
	var saved []string
	for _, ev := range h.eventsOf(engine.EventOutput) {
		saved = append(saved, ev.Output.Path)
		if data, err := os.ReadFile(ev.HostPath); err != nil || len(data) == 0 {
			t.Errorf("%s not on disk: %v", ev.Output.Path, err)
		}
	}
	if !slices.Contains(saved, "image-1.png") || !slices.Contains(saved, "audio-1.wav") {
		t.Errorf("saved = %v", saved)
	}
	req := h.fm.Requests()[1]
	if img, _ := resultOf(t, req, "i1")["result"].(string); !strings.Contains(img, "image/png") || !strings.Contains(img, "saved to /outputs/image-1.png") {
		t.Errorf("image result = %q", img)
	}
	if audio, _ := resultOf(t, req, "a1")["result"].(string); !strings.Contains(audio, "a beep") || !strings.Contains(audio, "/outputs/audio-1.wav") {
		t.Errorf("audio result = %q", audio)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "again"})
	h.turn(s, "again")
	var notices []string
	for _, ev := range h.eventsOf(engine.EventNotice) {
		if strings.Contains(ev.Text, "hung") {
			notices = append(notices, ev.Text)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "unavailable") {
		t.Errorf("notices about hung = %q", notices)
	}
}
