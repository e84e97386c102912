package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentMD is a minimal agent file in the spec bundles' format.
func agentMD(name string) string {
	return "# " + name + "\n\n```xml\n<agent id=\"" + name + "\" name=\"" + name + "\" title=\"T\" icon=\"🤖\">\n" +
		"  <persona><role>Role of " + name + "</role></persona>\n" +
		"  <critical-actions><i>Load into memory {bundle-root}/config.yaml</i></critical-actions>\n" +
		"  <cmds>\n    <c cmd=\"*help\">Show numbered cmd list</c>\n" +
		"    <c cmd=\"*brief\" run-workflow=\"{bundle-root}/workflows/brief/workflow.yaml\">Write a brief</c>\n" +
		"    <c cmd=\"*exit\">Exit</c>\n  </cmds>\n</agent>\n```\n"
}

const teamBundle = `type: bundle
name: product-team
version: 1.0.0
description: A team
agents:
  - id: pm
    name: Priya
    title: Product Manager
    icon: "📋"
    file: agents/pm.md
    entry_point: true
    description: Plans products
  - id: analyst
    file: agents/analyst.md
    entry_point: false
resources: [workflows/brief]
core_dependencies: [tasks/workflow.md]
`

func findProblem(c *Catalog, pathSuffix, reasonPart string) bool {
	for _, p := range c.Problems {
		if strings.HasSuffix(p.Path, filepath.FromSlash(pathSuffix)) && strings.Contains(p.Reason, reasonPart) {
			return true
		}
	}
	return false
}

func TestLoadBundle(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"team/bundle.yaml":       teamBundle,
		"team/config.yaml":       "user_name: Sam\noutput_folder: \"{project-root}/out\"\nproject_name: demo\n",
		"team/agents/pm.md":      agentMD("Paul"),
		"team/agents/analyst.md": agentMD("Ana"),
		"solo/bundle.yaml":       "type: standalone\nagent:\n  id: coach\n  file: coach.md\n",
		"solo/coach.md":          agentMD("Coach"),
		"notabundle/readme.md":   "nothing here",
	})
	c := Load(Options{Bundles: []string{dir}})
	if len(c.Problems) != 0 {
		t.Fatalf("problems: %+v", c.Problems)
	}
	if len(c.Agents) != 3 {
		t.Fatalf("agents: %d", len(c.Agents))
	}
	pm, ok := c.Find("pm")
	if !ok {
		t.Fatal("pm not found")
	}
	// bundle.yaml overrides the agent file's name, title and icon.
	if pm.Name != "Priya" || pm.Title != "Product Manager" || pm.Icon != "📋" || pm.Description != "Plans products" {
		t.Errorf("overrides: %+v", pm)
	}
	if !pm.EntryPoint || pm.Source != "bundle" || pm.Module != "product-team" || pm.Format != FormatXMLCmds {
		t.Errorf("pm: %+v", pm)
	}
	team := filepath.Join(dir, "team")
	h := pm.Home
	if h == nil || h.Kind != "bundle" || h.Name != "product-team" || h.ProjectRoot != team || h.BundleRoot != team || h.CoreRoot != "" {
		t.Fatalf("home %+v", h)
	}
	if h.ConfigPath != filepath.Join(team, "config.yaml") || h.Config["user_name"] != "Sam" || h.Config["output_folder"] != "{project-root}/out" {
		t.Errorf("config %+v", h)
	}
	if it := menuByTrigger(t, pm, "brief"); it.Workflow != "{bundle-root}/workflows/brief/workflow.yaml" {
		t.Errorf("brief %+v", it)
	}
	an, _ := c.Find("analyst")
	if an == nil || an.EntryPoint || an.Name != "Ana" {
		t.Errorf("analyst (entry_point false, name from file): %+v", an)
	}
	coach, _ := c.Find("coach")
	if coach == nil || !coach.EntryPoint || coach.Module != "solo" {
		t.Errorf("standalone coach: %+v", coach)
	}
	eps := c.EntryPoints()
	if len(eps) != 2 || eps[0].ID != "coach" || eps[1].ID != "pm" {
		t.Errorf("entry points %v", ids(eps))
	}
	// The option may also name the bundle directory itself.
	c2 := Load(Options{Bundles: []string{team}})
	if len(c2.Agents) != 2 || len(c2.Problems) != 0 {
		t.Errorf("bundle dir itself: %v %+v", ids(c2.Agents), c2.Problems)
	}
}

func ids(as []*Agent) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

// TestLoadBadBundles builds one broken bundle per kind of bad input next to
// a good one: each becomes one problem and every other agent still loads.
func TestLoadBadBundles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"good/bundle.yaml":       teamBundle,
		"good/agents/pm.md":      agentMD("Paul"),
		"good/agents/analyst.md": agentMD("Ana"),

		"badyaml/bundle.yaml": "type: bundle\nagents:\n  - id: x\n   file: [oops\n",
		"badyaml/agents/x.md": agentMD("X"),

		"missing/bundle.yaml":    "agents:\n  - {id: ghost, file: agents/ghost.md, entry_point: true}\n  - {id: real, file: agents/real.md, entry_point: true}\n",
		"missing/agents/real.md": agentMD("Real"),

		"dup/bundle.yaml": "agents:\n  - {id: twin, file: a.md, entry_point: true}\n  - {id: Twin, file: b.md, entry_point: true}\n",
		"dup/a.md":        agentMD("A"),
		"dup/b.md":        agentMD("B"),

		"empty/bundle.yaml": "agents:\n  - {id: hollow, file: hollow.md}\n  - {id: prose, file: prose.md}\n",
		"empty/hollow.md":   "```xml\n<agent></agent>\n```\n",
		"empty/prose.md":    "# Just prose\n",

		"escape/bundle.yaml":   "agents:\n  - {id: esc, file: ../good/agents/pm.md}\n  - {id: nofile}\n",
		"badtype/bundle.yaml":  "type: team\nagents: []\n",
		"noagents/bundle.yaml": "type: bundle\nname: none\n",
		"lonely/bundle.yaml":   "type: standalone\n",
		"badcfg/bundle.yaml":   "agents:\n  - {id: cfg, file: cfg.md}\n",
		"badcfg/cfg.md":        agentMD("Cfg"),
		"badcfg/config.yaml":   "user_name: [unclosed\n",
	})
	var c *Catalog
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("Load panicked: %v", r)
			}
		}()
		c = Load(Options{Bundles: []string{dir, filepath.Join(dir, "nope")}})
	}()
	want := []struct{ path, reason string }{
		{"badyaml/bundle.yaml", "invalid YAML"},
		{"missing/agents/ghost.md", "file not found"},
		{"dup/bundle.yaml", `duplicate agent id "Twin"`},
		{"empty/hollow.md", "defines no name"},
		{"empty/prose.md", "not an agent file"},
		{"escape/bundle.yaml", "outside the bundle"},
		{"escape/bundle.yaml", `agent "nofile" has no file`},
		{"badtype/bundle.yaml", `unknown bundle type "team"`},
		{"noagents/bundle.yaml", "lists no agents"},
		{"lonely/bundle.yaml", "no agent mapping"},
		{"badcfg/config.yaml", "config"},
		{"nope", "not found"},
	}
	for _, w := range want {
		if !findProblem(c, w.path, w.reason) {
			t.Errorf("no problem %s: %q in %+v", w.path, w.reason, c.Problems)
		}
	}
	if len(c.Problems) != len(want) {
		t.Errorf("%d problems, want %d: %+v", len(c.Problems), len(want), c.Problems)
	}
	for _, p := range c.Problems {
		if p.Reason == "" || strings.Contains(p.Reason, "panic") {
			t.Errorf("bad reason %+v", p)
		}
	}
	// Nothing else is lost: the good bundle, the good half of "missing",
	// the first twin and the agent whose config is broken all load.
	got := strings.Join(ids(c.Agents), ",")
	if got != "analyst,cfg,pm,real,twin" {
		t.Errorf("agents %s", got)
	}
	if a, _ := c.Find("twin"); a == nil || a.Name != "A" {
		t.Errorf("first twin wins: %+v", a)
	}
	if a, _ := c.Find("cfg"); a == nil || a.Home.Config != nil || a.Home.ConfigPath == "" {
		t.Errorf("broken config: %+v", a)
	}
}

func TestLoadBundleOptionErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"file.txt": "x", "empty/.keep": ""})
	c := Load(Options{Bundles: []string{filepath.Join(dir, "file.txt"), filepath.Join(dir, "empty"), "", "  "}})
	if len(c.Agents) != 0 || len(c.Problems) != 2 ||
		!findProblem(c, "file.txt", "not a directory") || !findProblem(c, "empty", "no bundle.yaml") {
		t.Errorf("problems %+v", c.Problems)
	}
}

func TestLoadBundleTooLarge(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"b/bundle.yaml": "agents:\n  - {id: big, file: big.md}\n"})
	f, err := os.Create(filepath.Join(dir, "b", "big.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := Load(Options{Bundles: []string{dir}})
	if len(c.Agents) != 0 || !findProblem(c, "b/big.md", "too large") {
		t.Errorf("problems %+v", c.Problems)
	}
}
