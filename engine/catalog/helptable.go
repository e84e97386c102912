package catalog

import (
	"path/filepath"
	"regexp"
	"strings"
)

// The column layouts BMAD's help tables (module-help.csv, bmad-help.csv)
// have had. Installers copy rows of one layout under the header of
// another (an external module's older rows under the newer header, or the
// reverse), so each row is checked against its header and, when it does
// not fit, read in the other layout.
var (
	// helpLayoutSkill is the layout of 6.3 and later: the skill runs the row.
	helpLayoutSkill = []string{"module", "skill", "display-name", "menu-code", "description", "action", "args",
		"phase", "preceded-by", "followed-by", "required", "output-location", "outputs"}
	// helpLayoutFile is the older layout: a workflow file (or
	// "skill:NAME") runs the row, and an agent offers it.
	helpLayoutFile = []string{"module", "phase", "name", "code", "sequence", "workflow-file", "command",
		"required", "agent", "options", "description", "output-location", "outputs"}
)

// helpRow is one row of a help table, whatever its layout.
type helpRow struct {
	line int
	// skill is the skill the row runs; file the workflow file it runs
	// instead (older layout), as written.
	skill, file string
	agent       string
	name, phase string
	// location and outputs say where the row's artifacts go and what they
	// are called.
	location, outputs string
}

// phaseName matches a BMAD phase: anytime, 1-analysis, 2-design.
var phaseName = regexp.MustCompile(`^(?:anytime|\d+-[a-z0-9-]+)$`)

// readHelpRows reads a help table by its header, row by row checked
// against the layout the header says (see fitsHeader).
func readHelpRows(path string) ([]helpRow, error) {
	cols, rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	layouts := map[bool]map[string]int{true: layoutCols(helpLayoutSkill), false: layoutCols(helpLayoutFile)}
	_, skillHeader := cols["skill"]
	out := make([]helpRow, 0, len(rows))
	for _, r := range rows {
		if !fitsHeader(r, skillHeader) && len(r.rec) >= len(helpLayoutFile) {
			r.col = layouts[!skillHeader]
		}
		out = append(out, newHelpRow(r))
	}
	return out, nil
}

// layoutCols maps a layout's column names to their indexes.
func layoutCols(names []string) map[string]int {
	m := make(map[string]int, len(names))
	for i, n := range names {
		m[n] = i
	}
	return m
}

// fitsHeader reports whether a row fits its header's layout: under a skill
// header its skill cell is empty, a _meta row or a skill name, never a
// phase, and no cell says "skill:NAME"; under a workflow-file header that
// cell is empty, "skill:NAME" or a path.
func fitsHeader(r csvRow, skillHeader bool) bool {
	if skillHeader {
		s := r.get("skill")
		if s == "" || strings.HasPrefix(s, "_") {
			return !hasSkillCell(r)
		}
		return !phaseName.MatchString(s) && isSkillName(s) && !hasSkillCell(r)
	}
	wf, ph := r.get("workflow-file"), r.get("phase")
	if wf == "" {
		return ph == "" || phaseName.MatchString(ph) || !isSkillName(ph) && !strings.HasPrefix(ph, "_")
	}
	return strings.HasPrefix(wf, "skill:") || strings.ContainsAny(wf, "/.")
}

// hasSkillCell reports whether a cell of the row says "skill:NAME", which
// only the workflow-file column of the older layout does.
func hasSkillCell(r csvRow) bool {
	for _, c := range r.rec {
		if strings.HasPrefix(strings.TrimSpace(c), "skill:") {
			return true
		}
	}
	return false
}

// isSkillName reports whether s is a skill name: kebab-case with a hyphen,
// perhaps in backticks.
func isSkillName(s string) bool {
	m := skillID.FindStringSubmatch(s)
	return m != nil && strings.Contains(m[1], "-")
}

// newHelpRow reads the fields of a row by its (header or layout) columns.
func newHelpRow(r csvRow) helpRow {
	h := helpRow{line: r.line, phase: r.get("phase"), location: r.get("output-location"), outputs: r.get("outputs")}
	h.name = r.get("display-name")
	fill(&h.name, r.get("name"))
	h.agent = r.get("agent")
	fill(&h.agent, r.get("agent-name"))
	wf := r.get("workflow-file")
	if name, ok := strings.CutPrefix(wf, "skill:"); ok {
		h.skill = strings.TrimSpace(name)
	} else if wf != "" {
		h.file = wf
	}
	if h.skill == "" && h.file == "" {
		if m := skillID.FindStringSubmatch(r.get("skill")); m != nil {
			h.skill = m[1]
		}
	}
	return h
}

// helpTables are the help tables of an install folder: _config's
// bmad-help.csv, which the installer merges from the modules' tables, then
// each module's module-help.csv (present or not). With modulesFirst the
// modules' own tables come first, so a problem is reported where it was
// written.
func helpTables(bmadDir string, modulesFirst bool) []string {
	var merged, tables []string
	if cfg := cfgDir(bmadDir); cfg != "" {
		merged = []string{filepath.Join(cfg, "bmad-help.csv")}
	}
	for _, mod := range subdirs(bmadDir) {
		tables = append(tables, filepath.Join(mod, "module-help.csv"))
	}
	if modulesFirst {
		return append(tables, merged...)
	}
	return append(merged, tables...)
}

// helpCheck reads an install's help tables against its skills and files:
// it reports what is really wrong, once for the table it first appears in
// (a module's own table before the merged bmad-help.csv).
type helpCheck struct {
	l       *loader
	project string
	known   map[string]*skillFile
	hints   *installHints
	told    map[string]bool
}

// table checks one help table.
func (c *helpCheck) table(p string) {
	rows, err := readHelpRows(p)
	if err != nil {
		c.l.problem(p, "%s", err)
		return
	}
	for _, r := range rows {
		c.row(p, r)
		if r.agent == "" {
			continue
		}
		for n := range c.known {
			if n == r.agent || strings.HasSuffix(n, "-agent-"+r.agent) {
				c.hints.helpAgents[n] = true
			}
		}
	}
}

// row reports a row that names a skill the install lacks or a workflow
// file that does not exist.
func (c *helpCheck) row(p string, r helpRow) {
	var what string
	switch {
	case r.skill != "" && !strings.HasPrefix(r.skill, "_") && c.known[r.skill] == nil:
		what = "the skill " + r.skill + ", which is not installed"
	case r.file != "" && !c.fileExists(r.file):
		what = "the workflow file " + r.file + ", which does not exist"
	default:
		return
	}
	if c.told[what] {
		return
	}
	c.told[what] = true
	c.l.problem(p, "line %d names %s", r.line, what)
}

// fileExists reports whether a workflow file a help row names (relative to
// the project, perhaps after {project-root}/) exists. An agent source
// (x.agent.yaml) exists when the installer compiled it (x.md beside it).
func (c *helpCheck) fileExists(file string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(file, "{project-root}"), "/")
	rel = filepath.Clean(filepath.FromSlash(rel))
	if strings.Contains(rel, "{") || !filepath.IsLocal(rel) {
		return true // a path with other variables is not checked
	}
	p := filepath.Join(c.project, rel)
	if stem, ok := strings.CutSuffix(p, ".agent.yaml"); ok && !present(p) {
		p = stem + ".md"
	}
	return present(p)
}
