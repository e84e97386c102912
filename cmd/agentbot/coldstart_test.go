package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp/mcptest"
)

// The first turn of a fresh `agentbot chat` gets the tools of a stdio
// reference server (server-everything from npm, which takes a second or
// two to start), with the default listing budget: a server that has never
// listed its tools in this process is waited for up to its timeout, not
// the 150ms budget. It used to say the server's tools were unavailable.
// Skipped without node and the package, a failure under CI=true.
func TestChatColdStartGetsReferenceTools(t *testing.T) {
	entry := mcptest.ReferenceEntry(t, "ev", "server-everything", "", "stdio")
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "Done."})
	dir := t.TempDir()
	files := map[string]string{
		"bundles/ev/bundle.yaml":      "type: bundle\nname: ev\nagents:\n  - id: toolie\n    file: agents/toolie.md\n    entry_point: true\n    mcp: [ev]\n",
		"bundles/ev/agents/toolie.md": toolAgent,
		"mcp.yaml":                    "servers:\n" + entry,
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
	vars := chatVars(t, fm)
	vars["AGENTBOT_BUNDLES"] = filepath.Join(dir, "bundles")
	vars["AGENTBOT_MCP_CONFIG"] = filepath.Join(dir, "mcp.yaml")
	r := runCmd(t, vars, "use the echo tool\n", "chat", "--agent", "toolie")
	r.wantCode(t, 0)
	lacks(t, "chat", r.stdout, "unavailable")
	if fm.Calls() != 1 {
		t.Fatalf("model calls = %d", fm.Calls())
	}
	var names []string
	for _, tl := range fm.Requests()[0].Tools {
		names = append(names, tl.Function.Name)
	}
	contains(t, "the first turn's tools", strings.Join(names, ","), "ev__echo")
}
