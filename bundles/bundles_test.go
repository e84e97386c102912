package bundles_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// This file checks that the bundles shipped in this directory are
// self-consistent on disk: every file a bundle, agent or workflow names
// exists, every variable it uses has a source, and the core tasks the
// bundles depend on are present. Whether the bundles load as agents is the
// catalog package's concern.

// bundleSpec is bundle.yaml.
type bundleSpec struct {
	Type             string       `yaml:"type"`
	Name             string       `yaml:"name"`
	Version          string       `yaml:"version"`
	Description      string       `yaml:"description"`
	Agents           []agentEntry `yaml:"agents"`
	Agent            *agentEntry  `yaml:"agent"`
	Resources        []string     `yaml:"resources"`
	CoreDependencies []string     `yaml:"core_dependencies"`
}

// agentEntry is one agent in bundle.yaml.
type agentEntry struct {
	ID          string `yaml:"id"`
	Name        string `yaml:"name"`
	Title       string `yaml:"title"`
	Icon        string `yaml:"icon"`
	File        string `yaml:"file"`
	EntryPoint  *bool  `yaml:"entry_point"`
	Description string `yaml:"description"`
}

// agentXML is the <agent> element of an agent file.
type agentXML struct {
	XMLName xml.Name `xml:"agent"`
	ID      string   `xml:"id,attr"`
	Name    string   `xml:"name,attr"`
	Title   string   `xml:"title,attr"`
	Icon    string   `xml:"icon,attr"`
	Persona struct {
		Role               string `xml:"role"`
		Identity           string `xml:"identity"`
		CommunicationStyle string `xml:"communication_style"`
		Principles         string `xml:"principles"`
	} `xml:"persona"`
	CriticalActions []string `xml:"critical-actions>i"`
	Cmds            []cmdXML `xml:"cmds>c"`
}

// cmdXML is one <c> menu item.
type cmdXML struct {
	Cmd              string `xml:"cmd,attr"`
	RunWorkflow      string `xml:"run-workflow,attr"`
	Exec             string `xml:"exec,attr"`
	ValidateWorkflow string `xml:"validate-workflow,attr"`
	Tmpl             string `xml:"tmpl,attr"`
	Data             string `xml:"data,attr"`
	Action           string `xml:"action,attr"`
	Label            string `xml:",chardata"`
}

// checked is what checkBundle learned about a bundle, for shape tests.
type checked struct {
	spec      bundleSpec
	agents    map[string]agentXML
	workflows map[string]string // workflow folder name -> instructions text
}

var (
	xmlFence    = regexp.MustCompile("(?s)```xml\\s*\n(.*?)```")
	doubleBrace = regexp.MustCompile(`\{\{[^{}]*\}\}`)
	singleBrace = regexp.MustCompile(`\{([A-Za-z][A-Za-z0-9_.-]*)\}`)
	configRef   = regexp.MustCompile(`\{config_source\}:([A-Za-z0-9_.-]+)`)
	stepOpen    = regexp.MustCompile(`<step n="(\d+)" goal="([^"]+)"`)
	coreEngine  = "{core-root}/tasks/workflow.md"
	pathVars    = []string{"project-root", "bundle-root", "core-root", "output_folder", "input_folder", "date"}
)

// repoRoot walks up from the working directory to the folder holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// shippedBundles lists the bundle directories under bundles/.
func shippedBundles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(repoRoot(t), "bundles")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatalf("read bundles dir: %v", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && exists(filepath.Join(root, e.Name(), "bundle.yaml")) {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	if len(dirs) == 0 {
		t.Fatal("no bundle (a folder with bundle.yaml) under bundles/")
	}
	return dirs
}

func coreDir(t *testing.T) string {
	return filepath.Join(repoRoot(t), "engine", "core")
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// resolvePath maps a "{root}/rest" path onto the host directory of root.
func resolvePath(p string, roots map[string]string) (string, error) {
	m := regexp.MustCompile(`^\{([A-Za-z0-9_.-]+)\}/(.+)$`).FindStringSubmatch(p)
	if m == nil {
		return "", fmt.Errorf("path %q does not start with a {root} variable", p)
	}
	root, ok := roots[m[1]]
	if !ok {
		return "", fmt.Errorf("path %q: unknown root {%s}", p, m[1])
	}
	rel := filepath.FromSlash(m[2])
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("path %q leaves its root", p)
	}
	return filepath.Join(root, rel), nil
}

// unknownVars returns the single-brace variables in text that are not known.
// {{double}} placeholders are the model's and are skipped.
func unknownVars(text string, known map[string]bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range singleBrace.FindAllStringSubmatch(doubleBrace.ReplaceAllString(text, ""), -1) {
		if !known[m[1]] && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

func knownSet(groups ...[]string) map[string]bool {
	k := map[string]bool{}
	for _, g := range groups {
		for _, s := range g {
			k[s] = true
		}
	}
	return k
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkBundle returns every inconsistency in the bundle at dir, with core
// being the directory {core-root} names.
func checkBundle(dir, core string) (*checked, []error) {
	var errs []error
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	res := &checked{agents: map[string]agentXML{}, workflows: map[string]string{}}

	raw, err := os.ReadFile(filepath.Join(dir, "bundle.yaml"))
	if err != nil {
		fail("bundle.yaml: %v", err)
		return res, errs
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&res.spec); err != nil {
		fail("bundle.yaml: %v", err)
		return res, errs
	}
	spec := res.spec
	var entries []agentEntry
	switch spec.Type {
	case "bundle":
		if len(spec.Agents) == 0 {
			fail("bundle.yaml: type bundle has no agents")
		}
		entries = spec.Agents
	case "standalone":
		if spec.Agent == nil {
			fail("bundle.yaml: type standalone has no agent")
		} else {
			entries = []agentEntry{*spec.Agent}
		}
	default:
		fail("bundle.yaml: type %q, want bundle or standalone", spec.Type)
	}

	config := map[string]any{}
	if raw, err := os.ReadFile(filepath.Join(dir, "config.yaml")); err != nil {
		fail("config.yaml: %v", err)
	} else if err := yaml.Unmarshal(raw, &config); err != nil {
		fail("config.yaml: %v", err)
	}
	configKeys := keys(config)
	roots := map[string]string{"bundle-root": dir, "project-root": dir, "core-root": core}

	workflowFiles := map[string]bool{}
	ids := map[string]bool{}
	for _, e := range entries {
		if e.ID == "" || e.Name == "" || e.File == "" {
			fail("bundle.yaml: agent %+v needs id, name and file", e)
			continue
		}
		if ids[e.ID] {
			fail("bundle.yaml: agent id %q is used twice", e.ID)
		}
		ids[e.ID] = true
		a, agentErrs := checkAgent(dir, e, roots, knownSet(pathVars, configKeys))
		errs = append(errs, agentErrs...)
		if a == nil {
			continue
		}
		res.agents[e.ID] = *a
		for _, c := range a.Cmds {
			if c.RunWorkflow != "" {
				if p, err := resolvePath(c.RunWorkflow, roots); err == nil {
					workflowFiles[p] = true
				}
			}
		}
	}

	for _, r := range spec.Resources {
		p := filepath.Join(dir, filepath.FromSlash(r))
		if !exists(p) {
			fail("bundle.yaml: resource %s does not exist", r)
		} else if wf := filepath.Join(p, "workflow.yaml"); exists(wf) {
			workflowFiles[wf] = true
		}
	}
	for _, d := range spec.CoreDependencies {
		if !exists(filepath.Join(core, filepath.FromSlash(d))) {
			fail("bundle.yaml: core dependency %s is not in the core", d)
		}
	}

	for _, wf := range keys(workflowFiles) {
		instructions, wfErrs := checkWorkflow(wf, roots, config)
		errs = append(errs, wfErrs...)
		res.workflows[filepath.Base(filepath.Dir(wf))] = instructions
	}
	return res, errs
}

// checkAgent checks one agent file and returns its parsed <agent> element.
func checkAgent(dir string, e agentEntry, roots map[string]string, known map[string]bool) (*agentXML, []error) {
	var errs []error
	fail := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("agent %s: "+format, append([]any{e.ID}, a...)...))
	}
	path := filepath.Join(dir, filepath.FromSlash(e.File))
	raw, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
		return nil, errs
	}
	m := xmlFence.FindSubmatch(raw)
	if m == nil {
		fail("%s has no ```xml block", e.File)
		return nil, errs
	}
	var a agentXML
	d := xml.NewDecoder(bytes.NewReader(m[1]))
	d.Strict = true
	if err := d.Decode(&a); err != nil {
		fail("%s: no well-formed <agent> element: %v", e.File, err)
		return nil, errs
	}
	if a.ID != e.ID || a.Name != e.Name {
		fail("<agent id=%q name=%q> does not match bundle.yaml (%s, %s)", a.ID, a.Name, e.ID, e.Name)
	}
	p := a.Persona
	if p.Role == "" || p.Identity == "" || p.CommunicationStyle == "" || p.Principles == "" {
		fail("persona needs role, identity, communication_style and principles")
	}
	actions := strings.Join(a.CriticalActions, "\n")
	if !strings.Contains(actions, "{bundle-root}/config.yaml") {
		fail("critical actions do not load {bundle-root}/config.yaml")
	}
	if !strings.Contains(actions, coreEngine) {
		fail("critical actions do not name the workflow engine %s", coreEngine)
	}
	if u := unknownVars(string(m[1]), known); len(u) > 0 {
		fail("unknown variables %v (known: %v)", u, keys(known))
	}
	cmds := map[string]bool{}
	runs := 0
	for _, c := range a.Cmds {
		cmds[c.Cmd] = true
		if strings.TrimSpace(c.Label) == "" {
			fail("menu item %s has no label", c.Cmd)
		}
		if c.RunWorkflow != "" {
			runs++
		}
		for _, ref := range []string{c.RunWorkflow, c.Exec, c.ValidateWorkflow, c.Tmpl, c.Data} {
			if ref == "" {
				continue
			}
			p, err := resolvePath(ref, roots)
			if err != nil {
				fail("menu item %s: %v", c.Cmd, err)
			} else if !exists(p) {
				fail("menu item %s: %s does not exist", c.Cmd, ref)
			}
		}
	}
	if runs == 0 {
		fail("menu has no run-workflow item")
	}
	if !cmds["*help"] || !cmds["*exit"] {
		fail("menu needs *help and *exit")
	}
	return &a, errs
}

// checkWorkflow checks a workflow.yaml and the files it names, and returns
// its instructions.
func checkWorkflow(wfPath string, roots map[string]string, config map[string]any) (string, []error) {
	var errs []error
	name := filepath.Base(filepath.Dir(wfPath))
	fail := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("workflow %s: "+format, append([]any{name}, a...)...))
	}
	raw, err := os.ReadFile(wfPath)
	if err != nil {
		fail("%v", err)
		return "", errs
	}
	wf := map[string]any{}
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		fail("workflow.yaml: %v", err)
		return "", errs
	}
	str := func(k string) string { s, _ := wf[k].(string); return s }
	for _, k := range []string{"name", "description", "config_source", "installed_path", "instructions", "template", "default_output_file"} {
		if _, ok := wf[k]; !ok {
			fail("workflow.yaml has no %s", k)
		}
	}
	if str("date") != "system-generated" {
		fail("date is %q, want system-generated", str("date"))
	}
	for _, m := range configRef.FindAllStringSubmatch(string(raw), -1) {
		if _, ok := config[m[1]]; !ok {
			fail("{config_source}:%s names no key of config.yaml (keys: %v)", m[1], keys(config))
		}
	}
	if cs, err := resolvePath(str("config_source"), roots); err != nil || !exists(cs) {
		fail("config_source %q is not the bundle's config.yaml", str("config_source"))
	}
	if ip, err := resolvePath(str("installed_path"), roots); err != nil || ip != filepath.Dir(wfPath) {
		fail("installed_path %q is not this workflow's folder", str("installed_path"))
	}
	if !strings.HasPrefix(str("default_output_file"), "{output_folder}/") {
		fail("default_output_file %q should be under {output_folder}/", str("default_output_file"))
	}
	known := knownSet(pathVars, keys(wf), keys(config))
	if u := unknownVars(string(raw), known); len(u) > 0 {
		fail("workflow.yaml uses unknown variables %v", u)
	}

	file := func(key string) (string, bool) {
		v := str(key)
		if v == "" {
			return "", false
		}
		v = strings.ReplaceAll(v, "{installed_path}", str("installed_path"))
		p, err := resolvePath(v, roots)
		if err != nil {
			fail("%s: %v", key, err)
			return "", false
		}
		data, err := os.ReadFile(p)
		if err != nil {
			fail("%s %q does not exist", key, str(key))
			return "", false
		}
		return string(data), true
	}

	instructions, ok := file("instructions")
	if ok {
		errs = append(errs, checkInstructions(name, instructions, known)...)
	}
	if tmpl, ok := file("template"); ok {
		if !doubleBrace.MatchString(tmpl) {
			fail("template has no {{placeholders}}")
		}
		if u := unknownVars(tmpl, map[string]bool{}); len(u) > 0 {
			fail("template uses single-brace variables %v; templates take {{double}} placeholders only", u)
		}
	}
	if _, has := wf["validation"]; has {
		file("validation")
	}
	return instructions, errs
}

// checkInstructions checks an instructions.md: prompt text, never parsed as XML.
func checkInstructions(name, text string, known map[string]bool) []error {
	var errs []error
	fail := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("workflow %s: instructions "+format, append([]any{name}, a...)...))
	}
	if !strings.Contains(text, "<critical>The workflow engine is "+coreEngine) {
		fail("do not start from the core workflow engine %s", coreEngine)
	}
	if !strings.Contains(text, "<workflow>") || !strings.Contains(text, "</workflow>") {
		fail("have no <workflow> ... </workflow>")
	}
	steps := stepOpen.FindAllStringSubmatch(text, -1)
	if len(steps) == 0 {
		fail("have no <step n=\"...\" goal=\"...\">")
	}
	for i, s := range steps {
		if n, _ := strconv.Atoi(s[1]); n != i+1 {
			fail("step %s is step number %d in order", s[1], i+1)
		}
	}
	if strings.Count(text, "<step ") != strings.Count(text, "</step>") {
		fail("open and close a different number of steps")
	}
	if !strings.Contains(text, "<template-output") {
		fail("never save the document (<template-output>)")
	}
	if u := unknownVars(text, known); len(u) > 0 {
		fail("use unknown variables %v", u)
	}
	return errs
}

func TestShippedBundlesAreConsistent(t *testing.T) {
	core := coreDir(t)
	for _, dir := range shippedBundles(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, errs := checkBundle(dir, core)
			for _, err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestProductTeamBundle(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "bundles", "product-team")
	res, errs := checkBundle(dir, coreDir(t))
	if len(errs) > 0 {
		t.Fatalf("product-team is inconsistent: %v", errors.Join(errs...))
	}
	if res.spec.Type != "bundle" || res.spec.Name != "product-team" {
		t.Errorf("bundle.yaml: type %q name %q, want bundle product-team", res.spec.Type, res.spec.Name)
	}
	entry := 0
	for _, e := range res.spec.Agents {
		if e.EntryPoint != nil && *e.EntryPoint {
			entry++
		}
	}
	if entry < 2 {
		t.Errorf("%d entry-point agents, want at least 2", entry)
	}
	for _, want := range []string{"product-brief", "prd", "user-stories", "incident-retro"} {
		text, ok := res.workflows[want]
		if !ok {
			t.Errorf("workflow %s is not reachable from any agent or resource", want)
			continue
		}
		if n := len(stepOpen.FindAllString(text, -1)); n < 4 || n > 8 {
			t.Errorf("workflow %s has %d steps, want 4 to 8", want, n)
		}
		for _, tag := range []string{"<ask>", "<action>", "<elicit-required/>"} {
			if !strings.Contains(text, tag) {
				t.Errorf("workflow %s instructions use no %s", want, tag)
			}
		}
	}
	if !strings.Contains(res.workflows["prd"], "{input_brief}") {
		t.Error("the prd workflow does not read the product brief ({input_brief})")
	}
}

func TestCoreTasks(t *testing.T) {
	tasks := filepath.Join(coreDir(t), "tasks")
	cases := map[string][]string{
		"workflow.md":   {"preload_workflow", "save_output", "<ask>", "template-output", "elicit-required", "{{", "/outputs", "yolo"},
		"adv-elicit.md": {"<methods>", "Continue", "Apply"},
	}
	for name, terms := range cases {
		data, err := os.ReadFile(filepath.Join(tasks, name))
		if err != nil {
			t.Errorf("core task: %v", err)
			continue
		}
		if lines := bytes.Count(data, []byte("\n")); lines < 40 {
			t.Errorf("core task %s has %d lines; it looks like a placeholder", name, lines)
		}
		for _, term := range terms {
			if !bytes.Contains(data, []byte(term)) {
				t.Errorf("core task %s never mentions %q", name, term)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(tasks, "adv-elicit.md"))
	if err != nil {
		return
	}
	if n := len(regexp.MustCompile(`<m n="\d+" name="[^"]+">`).FindAll(data, -1)); n < 8 || n > 10 {
		t.Errorf("adv-elicit.md offers %d methods, want 8 to 10", n)
	}
}

// minimalBundle writes a small valid bundle and core into a temp dir and
// returns the bundle and core directories.
func minimalBundle(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"core/tasks/workflow.md": "engine\n",
		"b/bundle.yaml": "type: bundle\nname: b\nagents:\n  - id: a\n    name: Ann\n    file: agents/a.md\n    entry_point: true\n" +
			"core_dependencies: [tasks/workflow.md]\n",
		"b/config.yaml": "user_name: there\noutput_folder: \"{project-root}/outputs\"\n",
		"b/agents/a.md": "# A\n\n```xml\n<agent id=\"a\" name=\"Ann\" title=\"T\" icon=\"x\">\n" +
			"<persona><role>r</role><identity>i</identity><communication_style>c</communication_style><principles>p</principles></persona>\n" +
			"<critical-actions><i>Load into memory {bundle-root}/config.yaml and set user_name</i><i>Hello {user_name}</i>" +
			"<i>When running a workflow, load {core-root}/tasks/workflow.md and follow it</i></critical-actions>\n" +
			"<cmds><c cmd=\"*help\">Help</c><c cmd=\"*w\" run-workflow=\"{bundle-root}/workflows/w/workflow.yaml\">Run w</c><c cmd=\"*exit\">Exit</c></cmds>\n" +
			"</agent>\n```\n",
		"b/workflows/w/workflow.yaml": "name: w\ndescription: d\nconfig_source: \"{bundle-root}/config.yaml\"\n" +
			"output_folder: \"{config_source}:output_folder\"\nuser_name: \"{config_source}:user_name\"\ndate: system-generated\n" +
			"installed_path: \"{bundle-root}/workflows/w\"\ninstructions: \"{installed_path}/instructions.md\"\n" +
			"template: \"{installed_path}/template.md\"\ndefault_output_file: \"{output_folder}/w-{{slug}}.md\"\n",
		"b/workflows/w/instructions.md": "<critical>The workflow engine is {core-root}/tasks/workflow.md — follow it.</critical>\n" +
			"<workflow>\n<step n=\"1\" goal=\"g\"><ask>q {user_name}?</ask><template-output file=\"{default_output_file}\">x</template-output></step>\n</workflow>\n",
		"b/workflows/w/template.md": "# W {{title}}\n",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "b"), filepath.Join(root, "core")
}

// edit rewrites a file of the temp bundle: old must occur in it.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCheckBundleReportsBrokenBundles(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(t *testing.T, b string)
		want   string
	}{
		{"bundle.yaml is not YAML", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "bundle.yaml"), "agents:", "agents: [")
		}, "bundle.yaml"},
		{"unknown bundle.yaml key", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "bundle.yaml"), "name: b", "nmae: b")
		}, "nmae"},
		{"wrong type", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "bundle.yaml"), "type: bundle", "type: bundel")
		}, "want bundle or standalone"},
		{"missing agent file", func(t *testing.T, b string) {
			os.Remove(filepath.Join(b, "agents", "a.md"))
		}, "agent a"},
		{"agent file without xml block", func(t *testing.T, b string) {
			os.WriteFile(filepath.Join(b, "agents", "a.md"), []byte("# A\nno agent here\n"), 0o644)
		}, "no ```xml block"},
		{"agent xml not well-formed", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "agents", "a.md"), "</persona>", "")
		}, "well-formed"},
		{"agent without run-workflow", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "agents", "a.md"), ` run-workflow="{bundle-root}/workflows/w/workflow.yaml"`, "")
		}, "no run-workflow"},
		{"run-workflow path missing", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "agents", "a.md"), "workflows/w/workflow.yaml", "workflows/nope/workflow.yaml")
		}, "does not exist"},
		{"agent uses unknown variable", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "agents", "a.md"), "Hello {user_name}", "Hello {user_nmae}")
		}, "user_nmae"},
		{"agent id differs from bundle.yaml", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "agents", "a.md"), `<agent id="a"`, `<agent id="z"`)
		}, "does not match"},
		{"workflow.yaml is not YAML", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "workflows", "w", "workflow.yaml"), "name: w", "name: [w")
		}, "workflow.yaml"},
		{"instructions missing", func(t *testing.T, b string) {
			os.Remove(filepath.Join(b, "workflows", "w", "instructions.md"))
		}, "instructions"},
		{"template missing", func(t *testing.T, b string) {
			os.Remove(filepath.Join(b, "workflows", "w", "template.md"))
		}, "template"},
		{"config key missing", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "workflows", "w", "workflow.yaml"), "{config_source}:user_name", "{config_source}:team")
		}, "{config_source}:team"},
		{"instructions do not name the engine", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "workflows", "w", "instructions.md"), "{core-root}/tasks/workflow.md", "somewhere")
		}, "core workflow engine"},
		{"steps out of order", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "workflows", "w", "instructions.md"), `<step n="1"`, `<step n="2"`)
		}, "step 2"},
		{"single brace in template", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "workflows", "w", "template.md"), "{{title}}", "{title} {{x}}")
		}, "single-brace"},
		{"missing core dependency", func(t *testing.T, b string) {
			edit(t, filepath.Join(b, "bundle.yaml"), "tasks/workflow.md", "tasks/gone.md")
		}, "core dependency"},
		{"config.yaml missing", func(t *testing.T, b string) {
			os.Remove(filepath.Join(b, "config.yaml"))
		}, "config.yaml"},
	}

	b, core := minimalBundle(t)
	if _, errs := checkBundle(b, core); len(errs) > 0 {
		t.Fatalf("the minimal bundle should be valid: %v", errors.Join(errs...))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, core := minimalBundle(t)
			tc.break_(t, b)
			_, errs := checkBundle(b, core)
			if len(errs) == 0 {
				t.Fatalf("no problem reported, want one mentioning %q", tc.want)
			}
			msg := errors.Join(errs...).Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("problems %q do not mention %q", msg, tc.want)
			}
		})
	}
}

// The core is embedded from engine/core/tasks; make sure nothing there is a
// stray placeholder that would ship in the binary.
func TestCoreHasNoPlaceholders(t *testing.T) {
	tasks := filepath.Join(coreDir(t), "tasks")
	err := filepath.WalkDir(tasks, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(data)) == "placeholder" || len(bytes.TrimSpace(data)) < 200 {
			t.Errorf("core file %s looks like a placeholder", d.Name())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk core tasks: %v", err)
	}
}
