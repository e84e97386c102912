package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

// agentsJSON is the shape `agentbot agents --json` prints.
type agentsJSON struct {
	Agents []struct {
		ID         string `json:"id"`
		Name       string `json:"name"`
		Title      string `json:"title"`
		Icon       string `json:"icon"`
		Source     string `json:"source"`
		Path       string `json:"path"`
		Format     string `json:"format"`
		EntryPoint bool   `json:"entry_point"`
		Menu       []struct {
			Cmd              string `json:"cmd"`
			Description      string `json:"description"`
			Workflow         string `json:"workflow"`
			Exec             string `json:"exec"`
			ValidateWorkflow string `json:"validate_workflow"`
		} `json:"menu"`
	} `json:"agents"`
	Problems []struct {
		Path   string `json:"path"`
		Reason string `json:"reason"`
	} `json:"problems"`
}

// parseAgentsJSON decodes the output strictly enough to catch a changed
// shape: both top-level keys, and the documented keys of every agent and
// menu item, must be present.
func parseAgentsJSON(t *testing.T, out string) agentsJSON {
	t.Helper()
	var raw map[string][]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("agents --json is not {\"agents\":[...],\"problems\":[...]}: %v\n%s", err, out)
	}
	for _, k := range []string{"agents", "problems"} {
		if _, ok := raw[k]; !ok {
			t.Fatalf("agents --json lacks %q:\n%s", k, out)
		}
	}
	for _, a := range raw["agents"] {
		for _, k := range []string{"id", "name", "source", "path", "format", "entry_point", "menu"} {
			if _, ok := a[k]; !ok {
				t.Fatalf("agent %s lacks key %q", a["id"], k)
			}
		}
		var menu []map[string]json.RawMessage
		if err := json.Unmarshal(a["menu"], &menu); err != nil {
			t.Fatalf("agent %s menu: %v", a["id"], err)
		}
		for _, m := range menu {
			for _, k := range []string{"cmd", "description"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("agent %s menu item %s lacks %q", a["id"], m["cmd"], k)
				}
			}
			if _, ok := m["run-workflow"]; ok {
				t.Fatalf("agent %s menu item %s reports run-workflow instead of workflow", a["id"], m["cmd"])
			}
		}
	}
	var got agentsJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

func agentIDsOf(a agentsJSON) []string {
	var ids []string
	for _, x := range a.Agents {
		ids = append(ids, x.ID)
	}
	return ids
}

// runWorkflowAttr reads the run-workflow attribute of a menu command from
// an agent file, so tests compare with the file rather than a copy of it.
func runWorkflowAttr(t *testing.T, file, cmd string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`cmd="` + regexp.QuoteMeta(cmd) + `"\s+run-workflow="([^"]+)"`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s has no %s with run-workflow", file, cmd)
	}
	return string(m[1])
}

// writeBundle writes a bundle folder name under parent with the given
// bundle.yaml and files, and returns the bundle folder.
func writeBundle(t *testing.T, parent, name, bundleYAML string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(parent, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files["bundle.yaml"] = bundleYAML
	for p, content := range files {
		fp := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fp), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// soloAgent is a tiny agent of our own for standalone test bundles.
const soloAgent = "# Solo\n\n```xml\n" + `<agent id="solo" name="Sol" title="Solo Helper" icon="S">
  <persona><role>Helper used by the CLI tests</role></persona>
  <critical-actions>
    <i>Load into memory {bundle-root}/config.yaml and set variables user_name</i>
  </critical-actions>
  <cmds>
    <c cmd="*help">Show the menu</c>
    <c cmd="*note" action="Write a one-line note">Write a note</c>
  </cmds>
</agent>` + "\n```\n"

const soloBundle = "type: standalone\nname: solo\nagent:\n  id: solo\n  name: Sol\n  title: Solo Helper\n  icon: S\n  file: agents/solo.md\n"

// writeSolo writes a standalone bundle with soloAgent under parent.
func writeSolo(t *testing.T, parent string, withConfig bool) string {
	files := map[string]string{"agents/solo.md": soloAgent}
	if withConfig {
		files["config.yaml"] = "user_name: tester\n"
	}
	return writeBundle(t, parent, "solo", soloBundle, files)
}

func TestAgentsTableListsSampleBundle(t *testing.T) {
	r := runCmd(t, nil, "", "agents", "--bundles", bundlesDir(t))
	r.wantCode(t, 0)
	lines := strings.Split(r.stdout, "\n")
	if !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("no header line:\n%s", r.stdout)
	}
	for _, want := range []struct{ id, name, title string }{
		{"product-lead", "Maren", "Product Lead"},
		{"retro-coach", "Dario", "Incident Retro Facilitator"},
	} {
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == want.id {
				found = true
				contains(t, want.id+" row", l, want.name)
				contains(t, want.id+" row", l, want.title)
				contains(t, want.id+" row", l, filepath.Join(bundlesDir(t), "product-team", "agents", want.id+".md"))
			}
		}
		if !found {
			t.Errorf("agents table lacks %s:\n%s", want.id, r.stdout)
		}
	}
	if r.stderr != "" {
		t.Errorf("no problems expected, stderr:\n%s", r.stderr)
	}
}

func TestAgentsJSONSampleBundle(t *testing.T) {
	r := runCmd(t, nil, "", "agents", "--json", "--bundles", bundlesDir(t))
	r.wantCode(t, 0)
	got := parseAgentsJSON(t, r.stdout)
	if len(got.Problems) != 0 {
		t.Errorf("problems: %+v", got.Problems)
	}
	ids := agentIDsOf(got)
	for _, id := range []string{"product-lead", "retro-coach"} {
		if !slices.Contains(ids, id) {
			t.Fatalf("agents %v lack %s", ids, id)
		}
	}
	for _, a := range got.Agents {
		if a.ID != "product-lead" {
			continue
		}
		if a.Name != "Maren" || a.Title != "Product Lead" || a.Icon == "" || a.Source != "bundle" || a.Format != "xml-cmds" || !a.EntryPoint {
			t.Errorf("product-lead summary: %+v", a)
		}
		if want := filepath.Join(bundlesDir(t), "product-team", "agents", "product-lead.md"); a.Path != want {
			t.Errorf("path %q, want %q", a.Path, want)
		}
		wantWF := runWorkflowAttr(t, a.Path, "*brief")
		var brief bool
		for _, m := range a.Menu {
			if m.Cmd == "*brief" {
				brief = true
				if m.Workflow != wantWF {
					t.Errorf("*brief workflow %q, want the run-workflow %q", m.Workflow, wantWF)
				}
				if m.Description == "" {
					t.Error("*brief has no description")
				}
			}
		}
		if !brief {
			t.Errorf("product-lead menu lacks *brief: %+v", a.Menu)
		}
	}
}

func TestAgentsJSONBMADAlpha5(t *testing.T) {
	root := fixtures.Dir(t, fixtures.Alpha5)
	r := runCmd(t, nil, "", "agents", "--json", "--bundles", bundlesDir(t), "--bmad-root", root)
	r.wantCode(t, 0)
	got := parseAgentsJSON(t, r.stdout)
	ids := agentIDsOf(got)
	want := []string{"analyst", "architect", "bmad-builder", "bmad-master", "brainstorming-coach", "creative-problem-solver",
		"design-thinking-coach", "dev", "innovation-strategist", "pm", "sm", "storyteller", "tea", "tech-writer", "ux-designer"}
	for _, id := range want {
		if !slices.Contains(ids, id) {
			t.Errorf("BMAD agent %s missing from %v", id, ids)
		}
	}
	modules := 0
	for _, a := range got.Agents {
		if a.Source != "module" {
			continue
		}
		modules++
		if !strings.HasPrefix(a.Path, root) {
			t.Errorf("%s path %s not under the fixture", a.ID, a.Path)
		}
		if a.ID != "pm" {
			continue
		}
		if len(a.Menu) != 10 {
			t.Errorf("pm has %d menu items, want 10: %+v", len(a.Menu), a.Menu)
		}
		byCmd := map[string]int{}
		for i, m := range a.Menu {
			byCmd[m.Cmd] = i
		}
		if i, ok := byCmd["*create-prd"]; !ok || !strings.HasSuffix(a.Menu[i].Workflow, "/2-plan-workflows/prd/workflow.yaml") {
			t.Errorf("pm *create-prd lacks its workflow: %+v", a.Menu)
		}
		if i, ok := byCmd["*validate-prd"]; !ok || a.Menu[i].ValidateWorkflow == "" {
			t.Errorf("pm *validate-prd lacks validate_workflow: %+v", a.Menu)
		}
	}
	if modules != len(want) {
		t.Errorf("%d module agents, want %d: %v", modules, len(want), ids)
	}
	// The bundles load beside the BMAD root.
	if !slices.Contains(ids, "product-lead") {
		t.Errorf("bundle agents missing beside BMAD: %v", ids)
	}
}

func TestAgentsJSONRunWorkflowAlpha0(t *testing.T) {
	root := fixtures.Dir(t, fixtures.Alpha0)
	r := runCmd(t, nil, "", "agents", "--json", "--bundles", t.TempDir(), "--bmad-root", root)
	r.wantCode(t, 0)
	got := parseAgentsJSON(t, r.stdout)
	for _, a := range got.Agents {
		if a.ID != "pm" {
			continue
		}
		want := runWorkflowAttr(t, a.Path, "*correct-course")
		for _, m := range a.Menu {
			if m.Cmd == "*correct-course" {
				if m.Workflow != want {
					t.Fatalf("*correct-course workflow %q, want run-workflow %q", m.Workflow, want)
				}
				return
			}
		}
		t.Fatalf("pm menu lacks *correct-course: %+v", a.Menu)
	}
	t.Fatalf("no pm agent in %v", agentIDsOf(got))
}

func TestAgentsBrokenBundleIsAProblem(t *testing.T) {
	parent := t.TempDir()
	broken := writeBundle(t, parent, "broken", "type: bundle\nagents: [unclosed\n", map[string]string{})
	writeSolo(t, parent, true)

	r := runCmd(t, nil, "", "agents", "--json", "--bundles", bundlesDir(t), "--bundles", parent)
	r.wantCode(t, 0)
	got := parseAgentsJSON(t, r.stdout)
	ids := agentIDsOf(got)
	for _, id := range []string{"product-lead", "retro-coach", "solo"} {
		if !slices.Contains(ids, id) {
			t.Errorf("%s missing beside a broken bundle: %v", id, ids)
		}
	}
	found := false
	for _, p := range got.Problems {
		if strings.Contains(p.Path, broken) {
			found = true
			if p.Reason == "" {
				t.Errorf("problem without a reason: %+v", p)
			}
		}
	}
	if !found {
		t.Fatalf("problems %+v do not name %s", got.Problems, broken)
	}

	// The table reports it on stderr, still exiting 0.
	r = runCmd(t, nil, "", "agents", "--bundles", parent)
	r.wantCode(t, 0)
	contains(t, "stderr", r.stderr, broken)
	contains(t, "stdout", r.stdout, "solo")
}

func TestAgentsNothingLoadedExits1(t *testing.T) {
	for name, dir := range map[string]string{
		"empty":       t.TempDir(),
		"nonexistent": filepath.Join(t.TempDir(), "nope"),
	} {
		t.Run(name, func(t *testing.T) {
			r := runCmd(t, nil, "", "agents", "--bundles", dir)
			r.wantCode(t, 1)
			contains(t, "stderr", r.stderr, "no agent could be loaded")
			r = runCmd(t, nil, "", "agents", "--json", "--bundles", dir)
			r.wantCode(t, 1)
			if got := parseAgentsJSON(t, r.stdout); len(got.Agents) != 0 {
				t.Errorf("agents: %v", agentIDsOf(got))
			}
		})
	}
}

func TestAgentsEnvDefaultsAndFlagOverride(t *testing.T) {
	solo := writeSolo(t, t.TempDir(), true)

	// AGENTBOT_BUNDLES alone.
	r := runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents", "--json")
	r.wantCode(t, 0)
	ids := agentIDsOf(parseAgentsJSON(t, r.stdout))
	if !slices.Contains(ids, "product-lead") || slices.Contains(ids, "solo") {
		t.Errorf("from env: %v", ids)
	}

	// A comma-separated env list.
	r = runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t) + "," + solo}, "", "agents", "--json")
	r.wantCode(t, 0)
	ids = agentIDsOf(parseAgentsJSON(t, r.stdout))
	if !slices.Contains(ids, "product-lead") || !slices.Contains(ids, "solo") {
		t.Errorf("from env list: %v", ids)
	}

	// The flag replaces the env value.
	r = runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents", "--json", "--bundles", solo)
	r.wantCode(t, 0)
	ids = agentIDsOf(parseAgentsJSON(t, r.stdout))
	if !slices.Equal(ids, []string{"solo"}) {
		t.Errorf("flag over env: %v, want [solo]", ids)
	}

	// The repeated flag adds up.
	r = runCmd(t, map[string]string{"AGENTBOT_BUNDLES": filepath.Join(t.TempDir(), "nope")}, "", "agents", "--json",
		"--bundles", solo, "--bundles", bundlesDir(t))
	r.wantCode(t, 0)
	got := parseAgentsJSON(t, r.stdout)
	ids = agentIDsOf(got)
	if !slices.Contains(ids, "product-lead") || !slices.Contains(ids, "solo") {
		t.Errorf("repeated flag: %v", ids)
	}
	if len(got.Problems) != 0 {
		t.Errorf("the env value should be replaced by the flags, problems: %+v", got.Problems)
	}

	// AGENTBOT_BMAD_ROOT from the environment.
	root := fixtures.Dir(t, fixtures.Alpha5)
	r = runCmd(t, map[string]string{"AGENTBOT_BUNDLES": solo, "AGENTBOT_BMAD_ROOT": root}, "", "agents", "--json")
	r.wantCode(t, 0)
	ids = agentIDsOf(parseAgentsJSON(t, r.stdout))
	if !slices.Contains(ids, "pm") || !slices.Contains(ids, "solo") {
		t.Errorf("BMAD root from env: %v", ids)
	}
}

func TestAgentsBadFlag(t *testing.T) {
	r := runCmd(t, nil, "", "agents", "--no-such-flag")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "no-such-flag")
}
