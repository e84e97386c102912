package catalog

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// bmadDirNames are the folder names of a BMAD install inside a project.
var bmadDirNames = []string{"bmad", "_bmad", ".bmad"}

// loadRoot loads one BMAD root option: an install (a project root holding
// bmad/, _bmad/ or .bmad/), a source tree (a folder that is or holds src/)
// or a v4 tree (a folder holding bmad-core/ or .bmad-core/).
func (l *loader) loadRoot(path string) {
	root := absPath(path)
	if r := checkDir(root); r != "" {
		l.problem(root, "BMAD root %s", r)
		return
	}
	for _, name := range bmadDirNames {
		if d := filepath.Join(root, name); isDir(d) {
			l.loadInstall(root, d)
			return
		}
	}
	if contains(bmadDirNames, filepath.Base(root)) && (isDir(filepath.Join(root, "core")) || cfgDir(root) != "") {
		l.loadInstall(filepath.Dir(root), root)
		return
	}
	if core := findV4(root); core != "" {
		l.loadV4(root, core)
		return
	}
	if src := findSrc(root); src != "" {
		l.loadSource(root, src)
		return
	}
	l.problem(root, "not a BMAD install, source tree or v4 tree: no bmad/, _bmad/, .bmad/, src/ or bmad-core/ folder")
}

// cfgDir returns the install's _cfg/ or _config/ folder, or "".
func cfgDir(bmadDir string) string {
	for _, name := range []string{"_cfg", "_config"} {
		if d := filepath.Join(bmadDir, name); isDir(d) {
			return d
		}
	}
	return ""
}

// moduleHomes makes one Home per module of an install or source tree.
type moduleHomes struct {
	l                           *loader
	kind, project, bundle, core string
	configDir                   func(module string) string
	homes                       map[string]*Home
	// outputs is set for an install, whose homes have an output folder.
	outputs bool
}

// get returns the Home of module, reading its config.yaml the first time.
func (m *moduleHomes) get(module string) *Home {
	if h, ok := m.homes[module]; ok {
		return h
	}
	h := &Home{Kind: m.kind, Name: module, ProjectRoot: m.project, BundleRoot: m.bundle, CoreRoot: m.core}
	if m.configDir != nil {
		if dir := m.configDir(module); dir != "" {
			m.l.loadConfig(h, filepath.Join(dir, "config.yaml"))
		}
	}
	if m.outputs {
		h.OutputFolder = outputFolder(h.Config)
	}
	m.homes[module] = h
	return h
}

// loadInstall loads an installed BMAD: from _cfg/agent-manifest.csv (or
// _config/) when present, else by scanning */agents/*.md. Customization
// files under _cfg/agents are already compiled into the agent files and are
// not applied again.
func (l *loader) loadInstall(project, bmadDir string) {
	if !l.once(bmadDir) {
		return
	}
	core := filepath.Join(bmadDir, "core")
	if !isDir(core) {
		core = ""
	}
	homes := &moduleHomes{l: l, kind: "bmad", project: project, bundle: bmadDir, core: core,
		configDir: func(module string) string { return filepath.Join(bmadDir, module) },
		homes:     map[string]*Home{}, outputs: true}
	// BMAD 6.3+ keeps agents and workflows as skill folders in the tools'
	// skills folders; older layouts keep them under the install. The rows
	// of agent-manifest.csv that name a skill found there are that skill's
	// (their path may be stale); the others name agent files.
	var manifest string
	var rows []manifestRow
	var rowsErr error
	if cfg := cfgDir(bmadDir); cfg != "" {
		if p := filepath.Join(cfg, "agent-manifest.csv"); isFile(p) || special(p) {
			manifest = p
			rows, rowsErr = readManifest(p)
		}
	}
	sp := l.loadSkillProject(project, bmadDir, rows)
	if manifest == "" || !l.loadManifest(project, bmadDir, manifest, rows, rowsErr, sp.claimed, homes) {
		l.scanInstall(bmadDir, homes)
	}
	l.bindStubs(project, bmadDir, sp.stubs, homes)
	if sp.known != nil {
		l.checkMenus(sp.known)
	}
}

// manifestRow is one agent row of agent-manifest.csv.
type manifestRow struct {
	line                                         int
	name, displayName, title, icon, module, path string
	canonicalID                                  string
	persona                                      skillPersona
}

// loadManifest loads the agents agent-manifest.csv lists, except the rows
// a skill claimed. It reports false when the manifest cannot be used, so
// the caller scans instead.
func (l *loader) loadManifest(project, bmadDir, manifest string, rows []manifestRow, err error, claimed map[int]bool, homes *moduleHomes) bool {
	if err != nil {
		l.problem(manifest, "%s; scanning */agents/*.md instead", err)
		return false
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if claimed[r.line] {
			continue
		}
		rel := filepath.Clean(filepath.FromSlash(r.path))
		if r.path == "" {
			l.problem(manifest, "line %d: agent %q has no path", r.line, r.name)
			continue
		}
		if !filepath.IsLocal(rel) {
			l.problem(manifest, "line %d: path %q is outside the project", r.line, r.path)
			continue
		}
		if seen[rel] {
			continue // the same agent listed twice (alpha.5 lists bmad-master twice)
		}
		seen[rel] = true
		file := manifestFile(project, bmadDir, rel)
		a, err := readAgent(file)
		if err != nil {
			l.problem(file, "listed in agent-manifest.csv: %s", reason(err))
			continue
		}
		module := r.module
		if module == "" {
			module = moduleOf(bmadDir, file)
		}
		if r.name != "" {
			a.ID = r.name
		}
		fill(&a.Name, r.displayName)
		fill(&a.Title, r.title)
		fill(&a.Icon, r.icon)
		l.addModuleAgent(a, module, homes)
	}
	return true
}

// readManifest parses agent-manifest.csv by its header.
func readManifest(path string) ([]manifestRow, error) {
	cols, recs, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	if _, ok := cols["path"]; !ok {
		return nil, errors.New("no path column")
	}
	rows := make([]manifestRow, 0, len(recs))
	for _, r := range recs {
		rows = append(rows, manifestRow{
			line: r.line, name: r.get("name"), displayName: r.get("displayname"),
			title: r.get("title"), icon: r.get("icon"), module: r.get("module"), path: r.get("path"),
			canonicalID: r.get("canonicalid"),
			persona: skillPersona{name: r.get("displayname"), title: r.get("title"), icon: r.get("icon"),
				module: r.get("module"), role: r.get("role"), identity: r.get("identity"),
				communicationStyle: r.get("communicationstyle"), princp: r.get("principles")},
		})
	}
	return rows, nil
}

// csvRow is one row of a CSV file read by its header.
type csvRow struct {
	line int
	col  map[string]int
	rec  []string
}

// get returns the trimmed value of column key (lower case), or "".
func (r csvRow) get(key string) string {
	if i, ok := r.col[key]; ok && i < len(r.rec) {
		return strings.TrimSpace(r.rec[i])
	}
	return ""
}

// readCSV reads a CSV file with a header row; column names are matched in
// lower case. Blank rows are skipped. cols maps column names to indexes.
func readCSV(path string) (cols map[string]int, rows []csvRow, err error) {
	data, err := readFile(path)
	if err != nil {
		return nil, nil, errors.New(reason(err))
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	recs, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("invalid CSV: %w", err)
	}
	if len(recs) == 0 {
		return nil, nil, errors.New("empty manifest")
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	rows = make([]csvRow, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		rows = append(rows, csvRow{line: i + 2, col: col, rec: rec})
	}
	return col, rows, nil
}

// manifestFile resolves a manifest path, relative to the project root. When
// the install folder was renamed (.bmad vs bmad), the path is tried again
// under the install folder itself.
func manifestFile(project, bmadDir, rel string) string {
	file := filepath.Join(project, rel)
	if isFile(file) {
		return file
	}
	if _, rest, ok := strings.Cut(filepath.ToSlash(rel), "/"); ok {
		if alt := filepath.Join(bmadDir, filepath.FromSlash(rest)); isFile(alt) {
			return alt
		}
	}
	return file
}

// scanInstall loads */agents/*.md of an install without a manifest. Files
// that hold no agent (a README) are skipped; backups such as *.md.bak never
// match.
func (l *loader) scanInstall(bmadDir string, homes *moduleHomes) {
	for _, mod := range subdirs(bmadDir) {
		name := filepath.Base(mod)
		if strings.HasPrefix(name, "_") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(mod, "agents", "*.md"))
		for _, f := range files {
			l.scanAgent(f, name, homes)
		}
	}
}

// scanAgent loads a file found by scanning: a file that is not an agent
// (or a folder named like one) is skipped silently, any other failure is a
// problem, a FIFO or device in the agent's place too.
func (l *loader) scanAgent(file, module string, homes *moduleHomes) {
	if !isFile(file) && !special(file) {
		return
	}
	a, err := readAgent(file)
	if errors.Is(err, ErrNotAgent) {
		return
	}
	if err != nil {
		l.problem(file, "%s", reason(err))
		return
	}
	l.addModuleAgent(a, module, homes)
}

// addModuleAgent adds an agent of a BMAD module.
func (l *loader) addModuleAgent(a *Agent, module string, homes *moduleHomes) {
	a.Source = "module"
	a.Module = module
	a.Home = homes.get(module)
	l.add(a)
}

// moduleOf returns the module folder of a file inside an install.
func moduleOf(bmadDir, file string) string {
	rel, err := filepath.Rel(bmadDir, file)
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first
}

// fill sets *dst to v when *dst is empty.
func fill(dst *string, v string) {
	if *dst == "" {
		*dst = strings.TrimSpace(v)
	}
}
