package catalog

import (
	"strings"
	"testing"
)

// A bundle and its agent entries may name MCP servers: the bundle's list
// comes first, then the entry's, each name once. A wrong shape is a problem
// and the agent still loads.
func TestBundleMCPServers(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"team/bundle.yaml": `type: bundle
name: team
mcp: [files]
agents:
  - id: pm
    file: agents/pm.md
    entry_point: true
    mcp: [github, files]
  - id: analyst
    file: agents/analyst.md
    mcp: search
  - id: dev
    file: agents/dev.md
    mcp: {bad: shape}
`,
		"team/agents/pm.md":      agentMD("Paul"),
		"team/agents/analyst.md": agentMD("Ana"),
		"team/agents/dev.md":     agentMD("Dev"),
		"bad/bundle.yaml":        "type: standalone\nmcp: {x: 1}\nagent:\n  id: coach\n  file: coach.md\n",
		"bad/coach.md":           agentMD("Coach"),
	})
	c := Load(Options{Bundles: []string{dir}})
	want := map[string]string{"pm": "files,github", "analyst": "files,search", "dev": "files", "coach": ""}
	for id, w := range want {
		a, ok := c.Find(id)
		if !ok {
			t.Fatalf("%s not loaded; problems %+v", id, c.Problems)
		}
		if got := strings.Join(a.MCP, ","); got != w {
			t.Errorf("%s: mcp = %q, want %q", id, got, w)
		}
	}
	if !findProblem(c, "team/bundle.yaml", `agent "dev": mcp: want a list of MCP server names`) {
		t.Errorf("no problem for dev's mcp: %+v", c.Problems)
	}
	if !findProblem(c, "bad/bundle.yaml", "mcp: want a list of MCP server names") {
		t.Errorf("no problem for the bundle's mcp: %+v", c.Problems)
	}
}
