//go:build unix

package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentbot/engine/fixtures"
)

// A FIFO where an agent file, a SKILL.md or a customize.toml should be is a
// problem entry; loading never blocks, and the other agents load.
func TestNonRegularFilesAreProblems(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	bundles := t.TempDir()
	writeFiles(t, bundles, map[string]string{"b/bundle.yaml": "type: bundle\nname: b\nagents:\n  - id: pipe\n    file: agents/pipe.md\n  - id: ok\n    file: agents/ok.md\n", "b/agents/ok.md": agentMD("ok")})
	for _, p := range []string{filepath.Join(bundles, "b/agents/pipe.md"), filepath.Join(root, ".claude/skills/bmad-help/SKILL.md"), filepath.Join(root, "_bmad/custom/bmad-agent-dev.toml")} {
		_ = os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	done := make(chan *Catalog, 1)
	go func() { done <- Load(Options{Bundles: []string{bundles}, BMADRoots: []string{root}}) }()
	var c *Catalog
	select {
	case c = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("loading a catalog with FIFOs hangs")
	}
	for _, want := range []string{"pipe.md", "bmad-help/SKILL.md", "bmad-agent-dev.toml"} {
		found := false
		for _, p := range c.Problems {
			if strings.HasSuffix(p.Path, want) && strings.Contains(p.Reason, "not a") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem for %s: %+v", want, c.Problems)
		}
	}
	if _, ok := c.Find("ok"); !ok {
		t.Error("the regular agent beside the FIFO did not load")
	}
	if _, ok := c.Find("pm"); !ok {
		t.Error("pm did not load")
	}
}
