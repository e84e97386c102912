package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"agentbot/engine/custom"
)

// SkillKind says what a skill folder is.
type SkillKind string

// The kinds of skill, from the top-level table of customize.toml.
const (
	SkillAgent      SkillKind = "agent"      // [agent]: a persona with a menu
	SkillWorkflow   SkillKind = "workflow"   // [workflow]: a workflow
	SkillStandalone SkillKind = "standalone" // no customize.toml
	SkillAlias      SkillKind = "alias"      // metadata.lifecycle: shim, a deprecated name of another skill
)

// SkillsVirtual is where the shared skills folder (--skills) appears to the
// model.
const SkillsVirtual = "/skills"

// Skill is one skill folder: SKILL.md, perhaps customize.toml, and the files
// beside them.
type Skill struct {
	// Name is the skill's id: its folder name and frontmatter name.
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Module      string    `json:"module,omitempty"`
	Kind        SkillKind `json:"kind"`
	// AliasOf names the skill a shim forwards to.
	AliasOf string `json:"alias_of,omitempty"`
	// Dir is the folder on disk; Virtual is the same folder as the model
	// sees it (/project/.claude/skills/bmad-prd, /skills/review).
	Dir     string `json:"dir"`
	Virtual string `json:"virtual"`
	// Project is the BMAD project root the skill belongs to; "" for a skill
	// of the shared skills folder, which every agent may use.
	Project string `json:"project,omitempty"`
	// Needs says what the skill needs that a chat runtime lacks, "" when it
	// runs here as it is.
	Needs string `json:"needs,omitempty"`
	// Scripts is set when the skill ships a scripts/ folder, whose scripts
	// cannot run here.
	Scripts bool `json:"scripts,omitempty"`
	// MCP are the MCP servers the skill says it requires (frontmatter
	// requires.mcp).
	MCP []string `json:"requires_mcp,omitempty"`
	// Problem says why the skill's customization cannot be used.
	Problem string `json:"problem,omitempty"`
}

// needsRepository are the skills that need a repository and a shell; they
// are listed with that limitation.
var needsRepository = map[string]string{
	"bmad-build":                 "a repository and a shell",
	"bmad-build-auto":            "a repository and a shell",
	"bmad-qa-generate-e2e-tests": "a repository and a shell",
	"bmad-retrospective":         "the repository's history (git)",
	"bmad-project-context":       "a repository and a shell",
}

// ideFolders maps the installer's tool names (manifest.yaml ides) to the
// folder holding that tool's skills folder.
var ideFolders = map[string]string{
	"claude-code": ".claude", "codex": ".agents", "gemini": ".agents", "opencode": ".agents",
	"windsurf": ".agents", "github-copilot": ".agents", "cursor": ".agents", "kiro": ".kiro",
	"cline": ".cline", "roo": ".roo", "trae": ".trae", "qwen": ".qwen", "crush": ".crush",
}

// Body returns the skill's SKILL.md without its frontmatter.
func (s *Skill) Body() (string, error) {
	data, err := readFile(filepath.Join(s.Dir, "SKILL.md"))
	if err != nil {
		return "", err
	}
	_, body := splitFrontmatter(string(data))
	return body, nil
}

// Files lists the skill's files relative to its folder, sorted, at most
// limit of them; hidden folders are skipped.
func (s *Skill) Files(limit int) []string {
	var out []string
	_ = filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(out) >= limit {
			return filepath.SkipDir
		}
		if d.IsDir() {
			if p != s.Dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(s.Dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out
}

// skillFile is a SKILL.md found on disk.
type skillFile struct {
	dir, rel string // the folder, and the folder relative to its root (slash form)
	data     []byte
	fm       frontmatter
	body     string
}

// readSkillFile reads dir/SKILL.md; it reports nil for a folder without one.
func readSkillFile(dir string) (*skillFile, error) {
	p := filepath.Join(dir, "SKILL.md")
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return nil, nil
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("SKILL.md is not a regular file")
	}
	data, err := readFile(p)
	if err != nil {
		return nil, err
	}
	header, body := splitFrontmatter(string(data))
	fm, err := parseFrontmatter(header)
	if err != nil {
		return nil, err
	}
	return &skillFile{dir: dir, data: data, fm: fm, body: body}, nil
}

// skillFolders returns the skills folders of a project: every
// .<tool>/skills folder, those of the tools manifest.yaml names first.
func skillFolders(project, bmadDir string) []string {
	var first []string
	if cfg := cfgDir(bmadDir); cfg != "" {
		if data, err := readFile(filepath.Join(cfg, "manifest.yaml")); err == nil {
			if root, err := decodeYAML(data); err == nil {
				for _, ide := range texts(mapGet(root, "ides")) {
					dir := ideFolders[ide]
					if dir == "" {
						dir = "." + ide
					}
					first = append(first, filepath.Join(project, dir, "skills"))
				}
			}
		}
	}
	entries, _ := os.ReadDir(project)
	var rest []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") && e.Name() != "." && e.Name() != ".." {
			rest = append(rest, filepath.Join(project, e.Name(), "skills"))
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range append(first, rest...) {
		if !seen[d] && isDir(d) {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// skillManifestRow is one row of skill-manifest.csv.
type skillManifestRow struct{ module, description string }

// readSkillManifest reads _config/skill-manifest.csv by canonical id. Its
// path column is stale (a deleted staging folder) and is not used.
func readSkillManifest(path string) (map[string]skillManifestRow, error) {
	_, rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	out := map[string]skillManifestRow{}
	for _, r := range rows {
		id := r.get("canonicalid")
		if id == "" {
			id = r.get("name")
		}
		if id != "" {
			out[id] = skillManifestRow{module: r.get("module"), description: r.get("description")}
		}
	}
	return out, nil
}

// skillProject is what loading a project's skills found: the lines of
// agent-manifest.csv rows a skill claimed, the skills by name, and the
// stub skills (BMAD 6.0 to 6.2) whose agents are files of the install.
type skillProject struct {
	claimed map[int]bool
	known   map[string]*skillFile
	stubs   []stubSkill
}

// loadSkillProject loads the skills of a BMAD 6.0+ project: every skill
// folder in every skills folder of the project, identical copies once. Agent
// skills become agents, except stubs, whose agent files the install loads;
// every skill is listed in the catalog's skills.
func (l *loader) loadSkillProject(project, bmadDir string, rows []manifestRow) skillProject {
	folders := skillFolders(project, bmadDir)
	if len(folders) == 0 {
		return skillProject{}
	}
	var manifest map[string]skillManifestRow
	if cfg := cfgDir(bmadDir); cfg != "" {
		if p := filepath.Join(cfg, "skill-manifest.csv"); isFile(p) || special(p) {
			m, err := readSkillManifest(p)
			if err != nil {
				l.problem(p, "%s", err)
			}
			manifest = m
		}
	}
	home := l.skillHome(project, bmadDir)
	byName, order := l.collectSkills(project, folders)
	stubFiles := findStubs(project, byName)
	hints, claimed := l.readHints(project, bmadDir, rows, byName, stubFiles)
	sp := skillProject{claimed: claimed, known: byName}
	var skills []*Skill
	for _, sf := range order {
		name := filepath.Base(sf.dir)
		sk := &Skill{Name: name, Description: sf.fm.Description, Dir: sf.dir,
			Virtual: "/project/" + sf.rel, Project: project, Needs: needsRepository[name]}
		if row, ok := manifest[name]; ok {
			sk.Module = row.module
			fill(&sk.Description, row.description)
		}
		if file, ok := stubFiles[name]; ok {
			sk.Kind = SkillAgent
			sp.stubs = append(sp.stubs, stubSkill{skill: sk, file: file})
			l.skills = append(l.skills, sk)
		} else {
			l.addSkill(sk, sf, project, home, hints)
		}
		skills = append(skills, sk)
	}
	resolveAliases(skills)
	return sp
}

// collectSkills reads the skill folders of a project's skills folders, the
// first copy of each name, sorted by name.
func (l *loader) collectSkills(project string, folders []string) (map[string]*skillFile, []*skillFile) {
	byName := map[string]*skillFile{}
	var order []*skillFile
	for _, folder := range folders {
		for _, dir := range subdirs(folder) {
			sf, err := readSkillFile(dir)
			if err != nil {
				l.problem(filepath.Join(dir, "SKILL.md"), "%s", reason(err))
				continue
			}
			if sf == nil {
				continue
			}
			rel, _ := filepath.Rel(project, dir)
			sf.rel = filepath.ToSlash(rel)
			name := filepath.Base(dir)
			if sf.fm.Name != "" && sf.fm.Name != name {
				l.problem(filepath.Join(dir, "SKILL.md"), "frontmatter name %q differs from its folder %q; the folder name is used", sf.fm.Name, name)
			}
			if prev, ok := byName[name]; ok {
				if !sameSkill(prev.dir, dir) {
					l.problem(dir, "skill %s differs from the copy in %s; that copy is used", name, path.Dir(prev.rel))
				}
				continue
			}
			byName[name] = sf
			order = append(order, sf)
		}
	}
	sort.Slice(order, func(i, j int) bool { return filepath.Base(order[i].dir) < filepath.Base(order[j].dir) })
	return byName, order
}

// checkMenus reports the menu items of a project's agents that name a skill
// the project lacks under that name or one of the same base name (see
// skillVariants), or a prompt file that is not there; the items stay, and
// say so when picked.
func (l *loader) checkMenus(known map[string]*skillFile) {
	has := func(n string) bool { return known[n] != nil }
	for _, a := range l.agents {
		if known[a.SkillName] == nil {
			continue
		}
		for _, it := range a.Menu {
			switch {
			case it.Skill != "" && !has(it.Skill) && variantOf(it.Skill, has) == "":
				l.problem(a.Path, "menu item %s names the skill %s, which is not installed%s", itemName(it), it.Skill, norVariant(it.Skill))
			case it.Skill == "" && a.Format == FormatSkill && strings.HasPrefix(it.Exec, "/project/") && a.Home != nil:
				if p := filepath.Join(a.Home.ProjectRoot, filepath.FromSlash(it.Exec[len("/project/"):])); !present(p) {
					l.problem(a.Path, "menu item %s names the prompt %s, which is not beside its SKILL.md", itemName(it), path.Base(it.Exec))
				}
			}
		}
	}
}

// itemName is how a problem names a menu item: its code, else its command.
func itemName(it MenuItem) string {
	if it.Code != "" {
		return it.Code
	}
	return it.Cmd
}

// norVariant names the base name a "-preview" skill name was tried as.
func norVariant(name string) string {
	if base, ok := strings.CutSuffix(name, "-preview"); ok {
		return ", nor is " + base
	}
	return ""
}

// addSkill sets a skill's kind and lists it; an agent skill also becomes
// an agent. The kind comes from, in order: a shim's lifecycle,
// customize.toml ([agent], [workflow]), bmad-skill-manifest.yaml's type,
// the install's agent-manifest.csv and help tables, and only then the
// name, with a menu table in SKILL.md.
func (l *loader) addSkill(sk *Skill, sf *skillFile, project string, home *Home, hints *installHints) {
	sk.Scripts = isDir(filepath.Join(sk.Dir, "scripts"))
	sk.MCP = sf.fm.MCP
	base := filepath.Join(sk.Dir, "customize.toml")
	switch {
	case sf.fm.Lifecycle == "shim":
		sk.Kind = SkillAlias
	case present(base): // a FIFO is reported by the merge
		l.addCustomized(sk, sf, project, home, base)
	default:
		l.addUncustomized(sk, sf, home, hints)
	}
	l.skills = append(l.skills, sk)
}

// addCustomized sets the kind of a skill with customize.toml.
func (l *loader) addCustomized(sk *Skill, sf *skillFile, project string, home *Home, base string) {
	// One parse: the merged table has the base's top-level table (an
	// override cannot remove it); only a failed merge parses the base
	// alone to tell the kind.
	merged, err := custom.Skill(project, sk.Dir)
	if err != nil {
		sk.Problem = RelReason(project, err)
		l.problem(errPath(err, base), "%s", sk.Problem)
		if t, berr := custom.LoadFile(base, true); berr == nil {
			merged = t
		}
	}
	switch {
	case merged["agent"] != nil:
		sk.Kind = SkillAgent
		l.add(skillAgent(sk, sf, home, merged))
	case merged["workflow"] != nil:
		sk.Kind = SkillWorkflow
	default:
		sk.Kind = SkillStandalone
	}
}

// addUncustomized sets the kind of a skill without customize.toml (BMAD
// 6.3, the cis and bmb modules, Agent Skills).
func (l *loader) addUncustomized(sk *Skill, sf *skillFile, home *Home, hints *installHints) {
	sk.Kind = SkillStandalone
	tf, err := readSkillTypeFile(sk.Dir)
	if err != nil {
		l.problem(filepath.Join(sk.Dir, "bmad-skill-manifest.yaml"), "%s", err)
	}
	var p skillPersona
	agent := false
	row, hasRow := manifestRow{}, false
	if hints != nil {
		row, hasRow = hints.rows[sk.Name]
	}
	switch {
	case tf != nil && tf.typ != "":
		agent = tf.typ == "agent"
		if tf.typ == "workflow" {
			sk.Kind = SkillWorkflow
		}
		p = tf.persona
	case hasRow:
		agent = true
	case hints != nil && hints.helpAgents[sk.Name]:
		agent = true
	case looksLikeAgentName(sk.Name):
		agent = len(skillMenuTable(sf.body)) > 0
	}
	if !agent {
		return
	}
	if hasRow {
		p.fillFrom(row.persona)
	}
	sk.Kind = SkillAgent
	fill(&sk.Module, p.module)
	l.add(legacySkillAgent(sk, sf, home, p))
}

// present reports whether path is there and is not a folder: a file, or a
// FIFO or device that the reader then refuses.
func present(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// errPath is the file a customization error names, or fallback.
func errPath(err error, fallback string) string {
	var ce *custom.Error
	if errors.As(err, &ce) && ce.Path != "" {
		return ce.Path
	}
	return fallback
}

// RelReason renders a customization error with its path relative to the
// project, so it can be shown to people without a host path.
func RelReason(project string, err error) string {
	msg := err.Error()
	if project != "" {
		msg = strings.ReplaceAll(msg, project+string(filepath.Separator), "")
	}
	return msg
}

// sameSkill reports whether two skill folders hold the same SKILL.md and
// customize.toml.
func sameSkill(a, b string) bool {
	for _, name := range []string{"SKILL.md", "customize.toml"} {
		da, ea := readFile(filepath.Join(a, name))
		db, eb := readFile(filepath.Join(b, name))
		if (ea == nil) != (eb == nil) || !bytes.Equal(da, db) {
			return false
		}
	}
	return true
}

// skillRef finds `bmad-…` skill names in text.
var skillRef = regexp.MustCompile("`(bmad-[a-z0-9-]+)`")

// resolveAliases points each shim at the first other skill its SKILL.md
// names.
func resolveAliases(skills []*Skill) {
	known := map[string]bool{}
	for _, s := range skills {
		known[s.Name] = true
	}
	for _, s := range skills {
		if s.Kind != SkillAlias {
			continue
		}
		data, err := readFile(filepath.Join(s.Dir, "SKILL.md"))
		if err != nil {
			continue
		}
		for _, m := range skillRef.FindAllStringSubmatch(string(data), -1) {
			if m[1] != s.Name && known[m[1]] {
				s.AliasOf = m[1]
				break
			}
		}
	}
}

// skillHome makes the Home of a skills project: its central config merged
// from the four TOML layers (or, for 6.3, the modules' config.yaml).
func (l *loader) skillHome(project, bmadDir string) *Home {
	h := &Home{Kind: "skills", Name: filepath.Base(bmadDir), ProjectRoot: project, BundleRoot: project, Config: map[string]string{}}
	central := filepath.Join(bmadDir, "config.toml")
	if !isFile(central) && !special(central) {
		for _, mod := range subdirs(bmadDir) {
			if p := filepath.Join(mod, "config.yaml"); isFile(p) {
				sub := &Home{}
				l.loadConfig(sub, p)
				for k, v := range sub.Config {
					h.Config[k] = v
				}
			}
		}
	} else if t, err := custom.Central(project); err != nil {
		h.Problem = RelReason(project, err)
		l.problem(errPath(err, central), "%s", h.Problem)
	} else {
		h.ConfigPath = central
		h.Config = flattenConfig(t)
	}
	h.OutputFolder = outputFolder(h.Config)
	return h
}

// outputFolder is where an install's config says BMAD writes artifacts,
// relative to the project: output_folder without {project-root}/, or
// "_bmad-output", the installers' default, when it is missing (6.0 to 6.2
// leave it out), holds other variables or leaves the project.
func outputFolder(cfg map[string]string) string {
	out := strings.TrimSpace(cfg["output_folder"])
	out = strings.TrimPrefix(strings.TrimPrefix(out, "{project-root}"), "/")
	if out == "" || strings.ContainsAny(out, "{}") || !filepath.IsLocal(filepath.FromSlash(out)) {
		out = "_bmad-output"
	}
	return path.Clean(out)
}

// flattenConfig turns the central config into variables: [core] first, then
// every [modules.X] table, each key by its bare name.
func flattenConfig(t custom.Table) map[string]string {
	out := map[string]string{}
	put := func(tbl any) {
		m, _ := tbl.(map[string]any)
		for k, v := range m {
			if _, isTable := v.(map[string]any); !isTable {
				out[k] = custom.Text(v)
			}
		}
	}
	put(t["core"])
	mods, _ := t["modules"].(map[string]any)
	names := make([]string, 0, len(mods))
	for k := range mods {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		put(mods[k])
	}
	return out
}

// skillAgent builds the agent of a customize.toml [agent] skill from its
// merged customization. A merge error leaves an agent that says why it
// cannot start.
func skillAgent(sk *Skill, sf *skillFile, home *Home, merged custom.Table) *Agent {
	a := &Agent{
		ID: agentSkillID(sk.Name), SkillName: sk.Name, Description: sk.Description,
		Source: "skill", Module: sk.Module, Path: filepath.Join(sk.Dir, "SKILL.md"), Format: FormatSkill,
		EntryPoint: true, Instructions: sf.body, Home: home, Problem: sk.Problem,
	}
	if a.Problem == "" {
		a.Problem = home.Problem
	}
	h1Name, h1Title := skillHeading(sf.body)
	t, _ := merged["agent"].(map[string]any)
	str := func(k string) string { s, _ := t[k].(string); return strings.TrimSpace(s) }
	a.Name, a.Title, a.Icon = str("name"), str("title"), str("icon")
	fill(&a.Name, h1Name)
	fill(&a.Title, h1Title)
	fill(&a.Name, a.ID)
	a.Persona = Persona{Role: str("role"), Identity: str("identity"), CommunicationStyle: str("communication_style"),
		Principles: bullets(custom.Strings(t["principles"]))}
	a.Facts = custom.Strings(t["persistent_facts"])
	a.Prepend = custom.Strings(t["activation_steps_prepend"])
	a.Append = custom.Strings(t["activation_steps_append"])
	a.Fields = map[string]string{}
	custom.Flatten("agent", t, a.Fields)
	items, _ := t["menu"].([]any)
	for _, raw := range items {
		m, _ := raw.(map[string]any)
		get := func(k string) string { s, _ := m[k].(string); return strings.TrimSpace(s) }
		it := MenuItem{Cmd: get("code"), Code: get("code"), Description: get("description"), Skill: get("skill"), Prompt: get("prompt")}
		if it.Skill == "" && it.Prompt == "" && it.Description == "" {
			continue
		}
		a.Menu = append(a.Menu, it)
	}
	return a
}

// legacySkillAgent builds the agent of an agent skill without
// customize.toml (BMAD 6.3, the cis module): its persona comes from its
// manifest and SKILL.md, its menu from the table there.
func legacySkillAgent(sk *Skill, sf *skillFile, home *Home, p skillPersona) *Agent {
	name, title := skillHeading(sf.body)
	a := &Agent{
		ID: agentSkillID(sk.Name), SkillName: sk.Name, Name: p.name, Title: p.title, Icon: p.icon,
		Description: sk.Description, Source: "skill", Module: sk.Module, Path: filepath.Join(sk.Dir, "SKILL.md"),
		Format: FormatSkill, EntryPoint: true, Instructions: sf.body, Home: home, Fields: map[string]string{},
		Problem: home.Problem,
		Persona: Persona{Role: p.role, Identity: p.identity, CommunicationStyle: p.communicationStyle, Principles: p.princp},
	}
	fill(&a.Name, name)
	fill(&a.Title, title)
	fill(&a.Name, a.ID)
	a.Menu = skillMenuTable(sf.body)
	promptFiles(a.Menu, sk.Virtual)
	return a
}

// skillHeading reads "# John — Product Manager" into name and title.
func skillHeading(body string) (name, title string) {
	for _, line := range strings.Split(body, "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
			for _, sep := range []string{" — ", " - ", " – ", ": "} {
				if n, t, ok := strings.Cut(h, sep); ok {
					return strings.TrimSpace(n), strings.TrimSpace(t)
				}
			}
			return strings.TrimSpace(h), ""
		}
	}
	return "", ""
}

// bullets renders items as "- item" lines.
func bullets(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return "- " + strings.Join(items, "\n- ")
}

// ScriptsNote marks a skill that ships a scripts/ folder.
const ScriptsNote = "its scripts cannot run here; do their checks by judgment"

// MCPNeed is an MCP server a skill requires, and whether the agent that
// loads it has that server.
type MCPNeed struct {
	Server     string `json:"server"`
	Configured bool   `json:"configured"`
	Note       string `json:"note"`
}

// MCPNeeds says, for each MCP server the skill requires, whether it is
// among servers, the ones configured for the agent.
func (s *Skill) MCPNeeds(servers []string) []MCPNeed {
	var out []MCPNeed
	for _, want := range s.MCP {
		n := MCPNeed{Server: want}
		for _, have := range servers {
			if strings.EqualFold(have, want) {
				n.Configured, n.Server = true, have
			}
		}
		switch {
		case n.Configured:
			n.Note = fmt.Sprintf("requires the MCP server %s, which is configured for this agent: use its tools (%s__…)", n.Server, n.Server)
		case len(servers) == 0:
			n.Note = fmt.Sprintf("requires the MCP server %s, which is not configured for this agent (it has no MCP servers): say so, and do only what works without it", want)
		default:
			n.Note = fmt.Sprintf("requires the MCP server %s, which is not configured for this agent (it has %s): say so, and do only what works without it", want, strings.Join(servers, ", "))
		}
		out = append(out, n)
	}
	return out
}
