package engine_test

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// This file reads what a BMAD install should show straight from BMAD's own
// files, without the catalog: the agents its manifests, skill folders or
// v4 trees define, and every menu item of each, from the agent XML, the
// customize.toml menus, the Capabilities tables and the v4 commands. The
// tests compare the catalog and the runtime with it.

// wantAgent is an agent as BMAD's files define it.
type wantAgent struct {
	id    string // the id agentbot gives it: the manifest name, the skill name after "agent-", the v4 id (with its pack)
	file  string // where it is defined
	items []wantItem
}

// wantItem is one menu item: its code (the v4 trigger), and what it
// starts: a skill, or a file (an exec or workflow path, a prompt beside
// the SKILL.md, a v4 command's task), absolute; neither for an item the
// agent carries out itself.
type wantItem struct {
	code, skill, file string
}

// bmadWant reads the agents of the BMAD project at root.
func bmadWant(t testing.TB, root string) []wantAgent {
	t.Helper()
	for _, core := range []string{".bmad-core", "bmad-core"} {
		if isDirT(filepath.Join(root, core, "agents")) {
			return v4Want(t, root, core)
		}
	}
	if agents := skillAgentsWant(t, root); len(agents) > 0 {
		return agents
	}
	return manifestWant(t, root)
}

// isDirT reports whether p is a folder.
func isDirT(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// readT reads a file, failing the test when it cannot.
func readT(t testing.TB, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// installDir is the _bmad/ (or bmad/) folder of a project.
func installDir(root string) string {
	for _, n := range []string{"_bmad", "bmad", ".bmad"} {
		if isDirT(filepath.Join(root, n)) {
			return filepath.Join(root, n)
		}
	}
	return ""
}

// manifestRows reads agent-manifest.csv as maps by column name.
func manifestRows(t testing.TB, root string) []map[string]string {
	t.Helper()
	dir := installDir(root)
	var p string
	for _, cfg := range []string{"_config", "_cfg"} {
		if c := filepath.Join(dir, cfg, "agent-manifest.csv"); dir != "" && fileExists(c) {
			p = c
		}
	}
	if p == "" {
		return nil
	}
	recs, err := csv.NewReader(strings.NewReader(readT(t, p))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			if i < len(r) {
				m[h] = r[i]
			}
		}
		out = append(out, m)
	}
	return out
}

// fileExists reports whether p is a file.
func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// manifestWant reads the agents agent-manifest.csv lists, each from its
// agent XML (a path listed twice once).
func manifestWant(t testing.TB, root string) []wantAgent {
	var out []wantAgent
	seen := map[string]bool{}
	for _, r := range manifestRows(t, root) {
		if seen[r["path"]] {
			continue
		}
		seen[r["path"]] = true
		file := filepath.Join(root, filepath.FromSlash(r["path"]))
		if !fileExists(file) {
			file = filepath.Join(installDir(root), filepath.FromSlash(strings.SplitN(r["path"], "/", 2)[1]))
		}
		out = append(out, wantAgent{id: r["name"], file: file, items: xmlItems(t, root, file)})
	}
	return out
}

var (
	xmlItem = regexp.MustCompile(`<item\s+cmd="([^"]*)"([^>]*)>`)
	xmlAttr = regexp.MustCompile(`\s(exec|workflow|run-workflow|validate-workflow)="([^"]*)"`)
)

// xmlItems reads the <item> elements of a compiled agent.
func xmlItems(t testing.TB, root, file string) []wantItem {
	var out []wantItem
	for _, m := range xmlItem.FindAllStringSubmatch(readT(t, file), -1) {
		code, _, _ := strings.Cut(m[1], " or fuzzy")
		it := wantItem{code: strings.TrimPrefix(strings.TrimSpace(code), "*")}
		for _, a := range xmlAttr.FindAllStringSubmatch(m[2], -1) {
			if name, ok := strings.CutPrefix(a[2], "skill:"); ok {
				it.skill = name
			} else if it.file == "" {
				it.file = projectPath(root, a[2])
			}
		}
		out = append(out, it)
	}
	return out
}

// projectPath turns a {project-root}/… path into a host path.
func projectPath(root, p string) string {
	return filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, "{project-root}/")))
}

// skillDirs lists the skill folders of a project: every .<tool>/skills/*
// with a SKILL.md, the first copy of each name.
func skillDirs(root string) map[string]string {
	out := map[string]string{}
	tools, _ := filepath.Glob(filepath.Join(root, ".*", "skills", "*", "SKILL.md"))
	sort.Strings(tools)
	for _, p := range tools {
		name := filepath.Base(filepath.Dir(p))
		if _, ok := out[name]; !ok {
			out[name] = filepath.Dir(p)
		}
	}
	return out
}

// skillAgentsWant reads the agent skills of a 6.3+ project: skills with an
// [agent] customize.toml, a bmad-skill-manifest.yaml of type agent, or a
// row in agent-manifest.csv; stubs that load an agent file are not.
func skillAgentsWant(t testing.TB, root string) []wantAgent {
	listed := map[string]bool{}
	for _, r := range manifestRows(t, root) {
		listed[r["canonicalId"]] = true
	}
	dirs := skillDirs(root)
	var names []string
	for n := range dirs {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []wantAgent
	for _, name := range names {
		dir := dirs[name]
		body := readT(t, filepath.Join(dir, "SKILL.md"))
		if strings.Contains(body, "LOAD the FULL agent file") {
			continue
		}
		toml, _ := os.ReadFile(filepath.Join(dir, "customize.toml"))
		manifest, _ := os.ReadFile(filepath.Join(dir, "bmad-skill-manifest.yaml"))
		isAgent := regexp.MustCompile(`(?m)^\[agent\]`).Match(toml) || regexp.MustCompile(`(?m)^type:\s*agent\s*$`).Match(manifest) || listed[name]
		if !isAgent {
			continue
		}
		id := name
		if i := strings.Index(name, "agent-"); i >= 0 {
			id = name[i+len("agent-"):]
		}
		a := wantAgent{id: id, file: filepath.Join(dir, "SKILL.md")}
		if len(toml) > 0 {
			a.items = tomlMenu(string(toml))
		} else {
			a.items = capabilities(body, dir)
		}
		out = append(out, a)
	}
	return out
}

// tomlMenu reads the [[agent.menu]] entries of a customize.toml.
func tomlMenu(toml string) []wantItem {
	var out []wantItem
	blocks := strings.Split(toml, "[[agent.menu]]")
	field := func(b, k string) string {
		m := regexp.MustCompile(`(?m)^` + k + `\s*=\s*"([^"]*)"`).FindStringSubmatch(b)
		if m == nil {
			return ""
		}
		return m[1]
	}
	for _, b := range blocks[1:] {
		if i := strings.Index(b, "\n["); i >= 0 {
			b = b[:i]
		}
		out = append(out, wantItem{code: field(b, "code"), skill: field(b, "skill")})
	}
	return out
}

// capabilities reads the Capabilities table of a SKILL.md: the code, and
// the skill or prompt file of the last column.
func capabilities(body, dir string) []wantItem {
	var out []wantItem
	sec := body[strings.Index(body, "## Capabilities")+1:]
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	rows := 0
	for _, line := range strings.Split(sec, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			continue
		}
		if rows++; rows <= 2 { // the header and its rule
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		it := wantItem{code: strings.Trim(strings.TrimSpace(cells[0]), "`")}
		last := strings.Trim(strings.TrimSpace(cells[len(cells)-1]), "`")
		switch {
		case strings.HasPrefix(last, "prompt:"):
			it.file = filepath.Join(dir, strings.TrimSpace(strings.TrimPrefix(last, "prompt:")))
		case strings.HasPrefix(last, "skill:"):
			it.skill = strings.TrimSpace(strings.TrimPrefix(last, "skill:"))
		case strings.Contains(last, "-"):
			it.skill = last
		}
		out = append(out, it)
	}
	return out
}

// v4Want reads the agents of a v4 project: core/agents/*.md and those of
// every expansion pack (.bmad-*), each from its YAML block.
func v4Want(t testing.TB, root, core string) []wantAgent {
	packs, _ := filepath.Glob(filepath.Join(root, ".bmad-*"))
	sort.Strings(packs)
	var out []wantAgent
	seen := map[string]bool{}
	for _, dir := range append([]string{filepath.Join(root, core)}, packs...) {
		if seen[dir] || !isDirT(filepath.Join(dir, "agents")) {
			continue
		}
		seen[dir] = true
		prefix := ""
		if filepath.Base(dir) != core {
			prefix = strings.TrimPrefix(filepath.Base(dir), ".bmad-") + "/"
		}
		files, _ := filepath.Glob(filepath.Join(dir, "agents", "*.md"))
		for _, f := range files {
			out = append(out, v4Agent(t, dir, f, prefix))
		}
	}
	return out
}

// v4Block finds an agent's ```yaml block.
var v4Block = regexp.MustCompile("(?s)```ya?ml\n(.*?)```")

// v4FileName finds a dependency file a command's text names.
var v4FileName = regexp.MustCompile(`[a-z0-9-]+\.(?:md|yaml)`)

// v4Agent reads one v4 agent: its id and commands; a command's file is
// the task (else template, else checklist) its text names that its folder
// holds.
func v4Agent(t testing.TB, dir, file, prefix string) wantAgent {
	var doc struct {
		Agent    struct{ ID string }
		Commands yaml.Node
	}
	m := v4Block.FindStringSubmatch(readT(t, file))
	if m == nil {
		t.Fatalf("%s: no yaml block", file)
	}
	if err := yaml.Unmarshal([]byte(m[1]), &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	a := wantAgent{id: prefix + doc.Agent.ID, file: file}
	add := func(key, text string) {
		key = strings.TrimPrefix(key, "*")
		if c, rest, ok := strings.Cut(key, " - "); ok {
			key, text = c, rest
		}
		trigger, _, _ := strings.Cut(strings.TrimSpace(key), " ")
		it := wantItem{code: trigger}
		for _, kind := range []string{"tasks", "templates", "checklists"} {
			for _, name := range v4FileName.FindAllString(text, -1) {
				if p := filepath.Join(dir, kind, name); it.file == "" && fileExists(p) {
					it.file = p
				}
			}
		}
		a.items = append(a.items, it)
	}
	n := &doc.Commands
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			switch c.Kind {
			case yaml.ScalarNode:
				add(c.Value, "")
			case yaml.MappingNode:
				add(c.Content[0].Value, c.Content[1].Value)
			}
		}
	} else if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			add(n.Content[i].Value, n.Content[i+1].Value)
		}
	}
	return a
}

// contentFile is the file whose text the first request of a start must
// carry: a skill's SKILL.md, or the file a launcher SKILL.md sends to; a
// workflow.yaml's instructions; any other file itself.
func contentFile(t testing.TB, root string, it wantItem) string {
	if it.skill != "" {
		dir := skillDirs(root)[it.skill]
		body := readT(t, filepath.Join(dir, "SKILL.md"))
		_, after, _ := strings.Cut(strings.TrimPrefix(body, "---"), "---")
		if m := regexp.MustCompile(`\(?\.?/?([a-z0-9-]+\.md)\)?\.?\s*$`).FindStringSubmatch(strings.TrimSpace(after)); m != nil && strings.Count(strings.TrimSpace(after), "\n") < 3 {
			return filepath.Join(dir, m[1])
		}
		return filepath.Join(dir, "SKILL.md")
	}
	if strings.HasSuffix(it.file, ".yaml") && strings.Contains(filepath.Base(it.file), "workflow") {
		m := regexp.MustCompile(`(?m)^instructions:\s*"?\{installed_path\}/([^"\s]+)"?`).FindStringSubmatch(readT(t, it.file))
		if m != nil {
			return filepath.Join(filepath.Dir(it.file), m[1])
		}
	}
	return it.file
}

// telltale is a line of a file that shows it reached the model: the first
// line of at least 30 characters with no variable, comment or front
// matter.
func telltale(t testing.TB, file string) string {
	text := readT(t, file)
	if strings.HasPrefix(text, "---") {
		if _, after, ok := strings.Cut(text[3:], "\n---"); ok {
			text = after
		}
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if len(line) >= 30 && !strings.ContainsAny(line, "{}") && !strings.HasPrefix(line, "<!--") && !strings.HasPrefix(line, "# <!--") {
			return line
		}
	}
	t.Fatalf("%s has no telltale line", file)
	return ""
}
