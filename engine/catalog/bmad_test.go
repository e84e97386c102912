package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

func TestLoadBMADInstallAlpha5(t *testing.T) {
	root := fixtures.Dir(t, fixtures.Alpha5)
	c := Load(Options{BMADRoots: []string{root}})
	if len(c.Problems) != 0 {
		t.Errorf("problems: %+v", c.Problems)
	}
	want := []string{"analyst", "architect", "bmad-builder", "bmad-master", "brainstorming-coach", "creative-problem-solver",
		"design-thinking-coach", "dev", "innovation-strategist", "pm", "sm", "storyteller", "tea", "tech-writer", "ux-designer"}
	if got := strings.Join(ids(c.Agents), ","); got != strings.Join(want, ",") {
		t.Fatalf("agents:\n got %s\nwant %s", got, strings.Join(want, ","))
	}
	if len(c.EntryPoints()) != 15 {
		t.Errorf("entry points %d", len(c.EntryPoints()))
	}
	bmadDir := filepath.Join(root, "bmad")
	for _, a := range c.Agents {
		data, err := os.ReadFile(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "<item "); len(a.Menu) != n || n == 0 {
			t.Errorf("%s: %d menu items, file has %d", a.ID, len(a.Menu), n)
		}
		if a.Name == "" || a.Title == "" || a.Icon == "" || a.Source != "module" || a.Format != FormatXMLV6 {
			t.Errorf("%s: %+v", a.ID, a)
		}
		h := a.Home
		if h == nil || h.Kind != "bmad" || h.Name != a.Module || h.ProjectRoot != root || h.BundleRoot != bmadDir || h.CoreRoot != filepath.Join(bmadDir, "core") {
			t.Fatalf("%s home %+v", a.ID, h)
		}
		if h.ConfigPath != filepath.Join(bmadDir, a.Module, "config.yaml") || h.Config["user_name"] != "BMad" || h.Config["output_folder"] != "{project-root}/docs" {
			t.Errorf("%s config %s %v", a.ID, h.ConfigPath, h.Config)
		}
		if !strings.HasPrefix(a.Path, filepath.Join(bmadDir, a.Module, "agents")+string(filepath.Separator)) {
			t.Errorf("%s path %s module %s", a.ID, a.Path, a.Module)
		}
	}
	pm, _ := c.Find("pm")
	if pm.Home.Config["project_name"] != "BMAD-METHOD" || pm.Module != "bmm" {
		t.Errorf("pm home %+v", pm.Home)
	}
	// Agents of one module share one Home.
	an, _ := c.Find("analyst")
	if an.Home != pm.Home {
		t.Error("bmm agents do not share their Home")
	}
	// The customize files have empty names: they are not applied.
	tw, _ := c.Find("tech-writer")
	if tw.Name != "paige" || tw.Persona.Role == "" {
		t.Errorf("tech-writer %q %+v", tw.Name, tw.Persona)
	}
	if m, _ := c.Find("bmad-master"); m.Module != "core" || m.Home.ConfigPath != filepath.Join(bmadDir, "core", "config.yaml") {
		t.Errorf("bmad-master %+v", m.Home)
	}
	// Passing the bmad folder itself loads the same install.
	c2 := Load(Options{BMADRoots: []string{bmadDir}})
	if len(c2.Agents) != 15 || c2.Agents[0].Home.ProjectRoot != root {
		t.Errorf("bmad dir as root: %d agents, %+v", len(c2.Agents), c2.Problems)
	}
}

// TestLoadBMADScan builds an install without a manifest, in the _bmad/ and
// _config/ spelling, and a second one whose manifest names a missing file.
func TestLoadBMADScan(t *testing.T) {
	dir := t.TempDir()
	v6 := func(name string) string {
		return "---\nname: x\n---\n```xml\n<agent id=\"x\" name=\"" + name + "\" title=\"T\" icon=\"I\">\n<activation><step n=\"1\">Load {project-root}/_bmad/bmm/config.yaml</step></activation>\n<menu><item cmd=\"*help\">Help</item><item cmd=\"*exit\">Exit</item></menu>\n</agent>\n```\n"
	}
	writeFiles(t, dir, map[string]string{
		"scan/_bmad/bmm/agents/pm.md":                     v6("John"),
		"scan/_bmad/bmm/agents/pm.md.bak":                 "garbage",
		"scan/_bmad/bmm/agents/README.md":                 "# Agents\n",
		"scan/_bmad/bmm/agents/broken.md":                 "```xml\n<agent>\n</agent>\n```\n",
		"scan/_bmad/bmm/config.yaml":                      "user_name: Ann\n",
		"scan/_bmad/cis/agents/storyteller.md":            v6("Sophia"),
		"scan/_bmad/core/agents/bmad-master.md":           v6("Master"),
		"scan/_bmad/_config/agents/bmm-pm.customize.yaml": "agent:\n  metadata:\n    name: \"\"\n",

		"man/.bmad/_cfg/agent-manifest.csv": "name,displayName,title,icon,module,path\n" +
			"\"pm\",\"Pat\",\"PM\",\"P\",\"bmm\",\"bmad/bmm/agents/pm.md\"\n" +
			"ghost,Ghost,G,👻,bmm,bmad/bmm/agents/ghost.md\n" +
			"pm,Pat,PM,P,bmm,bmad/bmm/agents/pm.md\n" +
			"evil,E,E,E,bmm,../../etc/passwd\n",
		"man/.bmad/bmm/agents/pm.md":    "```xml\n<agent id=\"x\" title=\"From file\"><menu><item cmd=\"*help\">Help</item></menu></agent>\n```\n",
		"man/.bmad/bmm/agents/other.md": v6("Not listed"),
	})
	c := Load(Options{BMADRoots: []string{filepath.Join(dir, "scan"), filepath.Join(dir, "man")}})
	if got := strings.Join(ids(c.Agents), ","); got != "bmad-master,bmm/pm,pm,storyteller" {
		t.Errorf("agents %s", got)
	}
	if !findProblem(c, "scan/_bmad/bmm/agents/broken.md", "defines no name") ||
		!findProblem(c, "man/bmad/bmm/agents/ghost.md", "listed in agent-manifest.csv: file not found") ||
		!findProblem(c, "agent-manifest.csv", "outside the project") ||
		!findProblem(c, "man/.bmad/bmm/agents/pm.md", "available as bmm/pm") || len(c.Problems) != 4 {
		t.Errorf("problems %+v", c.Problems)
	}
	var scanned, listed *Agent
	for _, a := range c.Agents {
		if strings.Contains(a.Path, "scan") && a.Module == "bmm" {
			scanned = a
		}
		if strings.Contains(a.Path, ".bmad") {
			listed = a
		}
	}
	if scanned == nil || scanned.Name != "John" || scanned.Home.Config["user_name"] != "Ann" || scanned.Home.BundleRoot != filepath.Join(dir, "scan", "_bmad") {
		t.Errorf("scanned pm %+v", scanned)
	}
	// The manifest fills what the file lacks (name) but does not override
	// what it says (title); its path is found under the renamed .bmad/.
	if listed == nil || listed.Name != "Pat" || listed.Title != "From file" || listed.Icon != "P" {
		t.Errorf("manifest pm %+v", listed)
	}
}

func TestLoadBMADRootErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"plain/notes.md": "x", "file": "x"})
	c := Load(Options{BMADRoots: []string{filepath.Join(dir, "missing"), filepath.Join(dir, "plain"), filepath.Join(dir, "file")}})
	if len(c.Agents) != 0 || len(c.Problems) != 3 ||
		!findProblem(c, "missing", "BMAD root not found") ||
		!findProblem(c, "plain", "not a BMAD install, source tree or v4 tree") ||
		!findProblem(c, "file", "not a directory") {
		t.Errorf("problems %+v", c.Problems)
	}
}

func TestLoadSourceTrees(t *testing.T) {
	a0 := fixtures.Dir(t, fixtures.Alpha0)
	c := Load(Options{BMADRoots: []string{a0}})
	if len(c.Problems) != 0 || len(c.Agents) != 13 {
		t.Fatalf("alpha.0: %v %+v", ids(c.Agents), c.Problems)
	}
	src := filepath.Join(a0, "src")
	for _, a := range c.Agents {
		wantMod := "bmm"
		if strings.Contains(a.Path, filepath.Join("src", "core")) {
			wantMod = "core"
		}
		if a.Module != wantMod || a.Home.ProjectRoot != a0 || a.Home.BundleRoot != src || a.Home.CoreRoot != filepath.Join(src, "core") || a.Format != FormatXMLCmds {
			t.Errorf("%s: module %s home %+v", a.ID, a.Module, a.Home)
		}
		if a.EntryPoint != (a.ID != "bmad-web-orchestrator") {
			t.Errorf("%s: entry point %v", a.ID, a.EntryPoint)
		}
	}
	if len(c.EntryPoints()) != 12 {
		t.Errorf("alpha.0 entry points %d", len(c.EntryPoints()))
	}

	v6 := fixtures.Dir(t, fixtures.V6)
	c = Load(Options{BMADRoots: []string{v6}})
	want := "analyst,architect,bmad-master,dev,pm,qa,quick-flow-solo-dev,sm,tech-writer,ux-designer"
	if got := strings.Join(ids(c.Agents), ","); got != want || len(c.Problems) != 0 {
		t.Fatalf("v6.0.0: %s %+v", got, c.Problems)
	}
	tw, _ := c.Find("tech-writer")
	if tw.Module != "bmm" || tw.Format != FormatAgentYAML || tw.Home.BundleRoot != filepath.Join(v6, "src") {
		t.Errorf("tech-writer %+v", tw)
	}
	m, _ := c.Find("bmad-master")
	if m.Module != "core" {
		t.Errorf("bmad-master module %q", m.Module)
	}
}

func TestLoadV4Tree(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V4)
	c := Load(Options{BMADRoots: []string{root}})
	if len(c.Problems) != 0 || len(c.Agents) != 10 {
		t.Fatalf("v4: %v %+v", ids(c.Agents), c.Problems)
	}
	core := filepath.Join(root, "bmad-core")
	for _, a := range c.Agents {
		if a.Format != FormatV4 || a.Module != "bmad-core" || a.Home.BundleRoot != core || a.Home.CoreRoot != core || a.Home.ProjectRoot != root {
			t.Errorf("%s %+v", a.ID, a.Home)
		}
		if a.Home.Config["qa.qaLocation"] != "docs/qa" || a.Home.ConfigPath != filepath.Join(core, "core-config.yaml") {
			t.Errorf("%s config %v", a.ID, a.Home.Config)
		}
	}
	if _, ok := c.Find("bmad-orchestrator"); !ok {
		t.Error("orchestrator missing")
	}
}

// TestLoadIDCollisions loads alpha.5, v6.0.0 and alpha.0 together: shared
// ids get their module as prefix, and a second copy of the same module
// gets -2, -3 in load order.
func TestLoadIDCollisions(t *testing.T) {
	roots := []string{fixtures.Dir(t, fixtures.Alpha5), fixtures.Dir(t, fixtures.V6), fixtures.Dir(t, fixtures.Alpha0)}
	c := Load(Options{BMADRoots: roots})
	for _, p := range c.Problems {
		if !strings.Contains(p.Reason, "is taken by") {
			t.Errorf("problem %+v", p)
		}
	}
	if len(c.Problems) != 15 {
		t.Errorf("%d collision problems, want 15", len(c.Problems))
	}
	if len(c.Agents) != 15+10+13 {
		t.Fatalf("%d agents", len(c.Agents))
	}
	seen := map[string]bool{}
	for _, a := range c.Agents {
		k := strings.ToLower(a.ID)
		if seen[k] {
			t.Errorf("duplicate id %s", a.ID)
		}
		seen[k] = true
	}
	checks := map[string]string{
		"pm":                    filepath.Join(roots[0], "bmad", "bmm", "agents", "pm.md"),
		"bmm/pm":                filepath.Join(roots[1], "src", "bmm", "agents", "pm.agent.yaml"),
		"bmm/pm-2":              filepath.Join(roots[2], "src", "modules", "bmm", "agents", "pm.md"),
		"bmad-master":           filepath.Join(roots[0], "bmad", "core", "agents", "bmad-master.md"),
		"core/bmad-master":      filepath.Join(roots[1], "src", "core", "agents", "bmad-master.agent.yaml"),
		"storyteller":           filepath.Join(roots[0], "bmad", "cis", "agents", "storyteller.md"),
		"qa":                    filepath.Join(roots[1], "src", "bmm", "agents", "qa.agent.yaml"),
		"bmad-web-orchestrator": filepath.Join(roots[2], "src", "core", "agents", "bmad-web-orchestrator.md"),
	}
	for id, path := range checks {
		a, ok := c.Find(id)
		if !ok || a.ID != id || a.Path != path {
			t.Errorf("Find(%s) = %+v, %v; want path %s", id, a, ok, path)
		}
	}
	// The first root's pm keeps the plain id.
	if a, ok := c.Find("pm"); !ok || a.Path != filepath.Join(roots[0], "bmad", "bmm", "agents", "pm.md") {
		t.Errorf("Find(pm) = %+v, %v", a, ok)
	}
	// The same load twice gives the same ids in the same order.
	again := Load(Options{BMADRoots: roots})
	if strings.Join(ids(again.Agents), ",") != strings.Join(ids(c.Agents), ",") {
		t.Error("ids are not deterministic")
	}
	// A root given twice loads once.
	twice := Load(Options{BMADRoots: []string{roots[0], roots[0] + string(filepath.Separator)}})
	if len(twice.Agents) != 15 {
		t.Errorf("root given twice: %d agents", len(twice.Agents))
	}
}
