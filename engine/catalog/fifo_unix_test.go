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

// Every file the catalog would read is checked the same way: a FIFO where a
// bundle's config.yaml, a bundle.yaml, an install's agent-manifest.csv, a
// scanned agent file or a v4 core-config.yaml should be is a problem entry
// naming its path, never a silent skip, and never a hang.
func TestNonRegularFilesEverywhere(t *testing.T) {
	bundles, roots := t.TempDir(), t.TempDir()
	v6 := "```xml\n<agent id=\"pm\" name=\"John\" title=\"PM\" icon=\"I\">\n<menu><item cmd=\"*help\">Help</item></menu>\n</agent>\n```\n"
	writeFiles(t, bundles, map[string]string{
		"cfg/bundle.yaml":  "type: bundle\nname: cfg\nagents:\n  - id: withcfg\n    file: agents/a.md\n",
		"cfg/agents/a.md":  agentMD("withcfg"),
		"good/bundle.yaml": "type: standalone\nname: good\nagent:\n  id: good\n  file: agents/g.md\n",
		"good/agents/g.md": agentMD("good"),
		"pipe/agents/p.md": agentMD("p"),
	})
	writeFiles(t, roots, map[string]string{
		"inst/bmad/bmm/agents/pm.md":     v6,
		"inst/bmad/_cfg/.keep":           "",
		"v4/bmad-core/agents/analyst.md": "# analyst\n\n```yaml\nagent:\n  name: Mary\n  id: analyst\n  title: Analyst\n```\n",
	})
	fifos := []string{
		filepath.Join(bundles, "cfg/config.yaml"),
		filepath.Join(bundles, "pipe/bundle.yaml"),
		filepath.Join(roots, "inst/bmad/_cfg/agent-manifest.csv"),
		filepath.Join(roots, "inst/bmad/bmm/agents/pipe.md"),
		filepath.Join(roots, "v4/bmad-core/core-config.yaml"),
	}
	for _, p := range fifos {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	done := make(chan *Catalog, 1)
	go func() {
		done <- Load(Options{Bundles: []string{bundles}, BMADRoots: []string{filepath.Join(roots, "inst"), filepath.Join(roots, "v4")}})
	}()
	var c *Catalog
	select {
	case c = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("loading a catalog with FIFOs hangs")
	}
	for _, p := range fifos {
		found := false
		for _, pr := range c.Problems {
			if pr.Path == p && strings.Contains(pr.Reason, "not a regular file") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem for %s: %+v", p, c.Problems)
		}
	}
	for _, id := range []string{"withcfg", "good", "pm", "analyst"} {
		if _, ok := c.Find(id); !ok {
			t.Errorf("%s did not load: %v", id, ids(c.Agents))
		}
	}
}

// A FIFO as a skill's customize.toml or as the central config.toml is a
// problem entry, not a silent standalone skill or default config.
func TestSkillFIFOsAreProblems(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	for _, p := range []string{filepath.Join(root, ".claude/skills/bmad-prd/customize.toml"), filepath.Join(root, "_bmad/config.toml")} {
		_ = os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
	}
	done := make(chan *Catalog, 1)
	go func() { done <- Load(Options{BMADRoots: []string{root}}) }()
	var c *Catalog
	select {
	case c = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("loading hangs")
	}
	for _, want := range []string{"bmad-prd/customize.toml", "_bmad/config.toml"} {
		found := false
		for _, p := range c.Problems {
			if strings.HasSuffix(p.Path, want) && strings.Contains(p.Reason, "not a file") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem for %s: %+v", want, c.Problems)
		}
	}
}
