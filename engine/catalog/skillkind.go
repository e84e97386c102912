package catalog

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// skillPersona is who an agent skill without customize.toml is, as a
// manifest says: bmad-skill-manifest.yaml or a row of agent-manifest.csv.
type skillPersona struct {
	name, title, icon, module                  string
	role, identity, communicationStyle, princp string
}

// fillFrom fills p's empty fields from o.
func (p *skillPersona) fillFrom(o skillPersona) {
	fill(&p.name, o.name)
	fill(&p.title, o.title)
	fill(&p.icon, o.icon)
	fill(&p.module, o.module)
	fill(&p.role, o.role)
	fill(&p.identity, o.identity)
	fill(&p.communicationStyle, o.communicationStyle)
	fill(&p.princp, o.princp)
}

// skillTypeFile is a skill's bmad-skill-manifest.yaml: its type (agent,
// workflow, skill) and, for an agent, its persona.
type skillTypeFile struct {
	typ     string
	persona skillPersona
}

// readSkillTypeFile reads dir/bmad-skill-manifest.yaml; nil when there is
// none. Invalid YAML is an error with its line.
func readSkillTypeFile(dir string) (*skillTypeFile, error) {
	p := filepath.Join(dir, "bmad-skill-manifest.yaml")
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		return nil, nil
	}
	data, err := readFile(p)
	if err != nil {
		return nil, fmt.Errorf("bmad-skill-manifest.yaml: %s", reason(err))
	}
	root, err := decodeYAML(data)
	if err != nil {
		return nil, fmt.Errorf("bmad-skill-manifest.yaml is %w", err)
	}
	get := func(k string) string { return scalar(mapGet(root, k)) }
	return &skillTypeFile{typ: strings.ToLower(get("type")), persona: skillPersona{
		name: get("displayName"), title: get("title"), icon: get("icon"), module: get("module"),
		role: get("role"), identity: get("identity"), communicationStyle: get("communicationStyle"),
		princp: get("principles"),
	}}, nil
}

// installHints is what an install's manifests say about its skills, the
// sources of a skill's kind after customize.toml and
// bmad-skill-manifest.yaml: agent-manifest.csv rows (with their persona)
// and the agents named by module-help.csv and bmad-help.csv.
type installHints struct {
	rows       map[string]manifestRow // agent-manifest.csv row by the skill it names
	helpAgents map[string]bool        // skills the help tables name as agents
}

// rowSkill returns the skill an agent-manifest.csv row names, or "": its
// canonicalId, its name, the folder of its (perhaps stale) path, or the
// name with BMAD's agent prefixes.
func rowSkill(r manifestRow, known map[string]*skillFile) string {
	cands := []string{r.canonicalID, r.name, path.Base(path.Dir(filepath.ToSlash(r.path))), "bmad-agent-" + r.name}
	if r.module != "" {
		cands = append(cands, "bmad-"+r.module+"-agent-"+r.name)
	}
	for _, c := range cands {
		if c != "" && known[c] != nil {
			return c
		}
	}
	return ""
}

// readHints reads the install's manifests against the skills found:
// agent-manifest.csv rows that name a skill are claimed (their path may be
// stale: the skill is where the skills folders hold it), except rows of
// stub skills, whose agent files the install loads; the help tables' rows
// that name a skill the install lacks or a file it does not hold are
// problems.
func (l *loader) readHints(project, bmadDir string, rows []manifestRow, known map[string]*skillFile, stubs map[string]string) (*installHints, map[int]bool) {
	h := &installHints{rows: map[string]manifestRow{}, helpAgents: map[string]bool{}}
	claimed := map[int]bool{}
	for _, r := range rows {
		if name := rowSkill(r, known); name != "" && stubs[name] == "" {
			h.rows[name] = r
			claimed[r.line] = true
		}
	}
	c := &helpCheck{l: l, project: project, known: known, hints: h, told: map[string]bool{}}
	for _, p := range helpTables(bmadDir, true) {
		if isFile(p) || special(p) {
			c.table(p)
		}
	}
	return h, claimed
}

// skillID finds a skill id in a table cell: bmad-prd, `bmad-prd`.
var skillID = regexp.MustCompile("^`?([a-z0-9][a-z0-9._-]*)`?$")

// agentSkillID is the id of an agent skill: the part after "agent-"
// (bmad-agent-pm is pm, bmad-cis-agent-storyteller is storyteller), or
// the whole name.
func agentSkillID(name string) string {
	if i := strings.Index(name, "agent-"); i >= 0 && (i == 0 || name[i-1] == '-') && len(name) > i+6 {
		return name[i+6:]
	}
	return name
}

// looksLikeAgentName reports whether a skill name has an agent prefix; the
// name is the last source of a kind, and only with a menu table.
func looksLikeAgentName(name string) bool {
	return strings.HasPrefix(name, "bmad-agent-") || strings.Contains(name, "-agent-")
}

// menuCode is the short code of a menu row: PRD, `CP`.
var menuCode = regexp.MustCompile("^`?([A-Z][A-Z0-9]{0,3})`?$")

// skillMenuTable reads the menu of a SKILL.md: the rows of its tables
// (Capabilities, Menu) whose code cell is a short code and that name a
// skill, in the Skill column (with or without backticks) or in backticks
// in any cell, or, in a "Skill or Prompt" column, a skill ("skill: NAME")
// or a prompt file beside the SKILL.md ("prompt: NAME.md"), whose item
// execs that file (see promptFiles).
func skillMenuTable(body string) []MenuItem {
	var out []MenuItem
	var cols map[string]int
	lines := strings.Split(body, "\n")
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "|") {
			cols = nil
			continue
		}
		cells := tableCells(t)
		if i+1 < len(lines) && isTableRule(lines[i+1]) {
			cols = map[string]int{}
			for j, c := range cells {
				cols[strings.ToLower(strings.Trim(c, "`* "))] = j
			}
			continue
		}
		if isTableRule(t) {
			continue
		}
		if it, ok := menuRowItem(cells, cols); ok {
			out = append(out, it)
		}
	}
	return out
}

// menuRowItem reads one table row as a menu item.
func menuRowItem(cells []string, cols map[string]int) (MenuItem, bool) {
	cell := func(name string, fallback int) string {
		if j, ok := cols[name]; ok && j < len(cells) {
			return cells[j]
		}
		if fallback >= 0 && fallback < len(cells) && cols == nil {
			return cells[fallback]
		}
		return ""
	}
	code := menuCode.FindStringSubmatch(cell("code", 0))
	if code == nil {
		return MenuItem{}, false
	}
	it := MenuItem{Cmd: code[1], Code: code[1], Description: cell("description", 1)}
	if _, ok := cols["skill or prompt"]; ok {
		return skillOrPrompt(it, cell("skill or prompt", -1))
	}
	if _, ok := cols["skill"]; ok {
		// A Skill column: a kebab-case name, or a placeholder such as
		// "todo" for a capability the persona carries out itself.
		if m := skillID.FindStringSubmatch(cell("skill", -1)); m != nil && strings.Contains(m[1], "-") {
			it.Skill = m[1]
		} else if it.Description != "" {
			it.Prompt = it.Description
		}
		return it, it.Skill != "" || it.Prompt != ""
	}
	{
		for _, c := range cells[1:] {
			if ref := skillRef.FindStringSubmatch(c); ref != nil {
				it.Skill = ref[1]
				break
			}
		}
	}
	return it, it.Skill != ""
}

// promptFilePrefix marks an item's Exec as a prompt file beside the
// agent's SKILL.md until the agent's folder is known (see promptFiles).
const promptFilePrefix = "prompt:"

// skillOrPrompt reads a "Skill or Prompt" cell: "skill: NAME" starts that
// skill, "prompt: NAME.md" the prompt file beside the SKILL.md, other
// prompt text is the item's instruction.
func skillOrPrompt(it MenuItem, c string) (MenuItem, bool) {
	kind, val, ok := strings.Cut(strings.Trim(c, "` "), ":")
	val = strings.Trim(strings.TrimSpace(val), "`")
	switch {
	case !ok || val == "":
	case strings.EqualFold(strings.TrimSpace(kind), "skill"):
		if isSkillName(val) {
			it.Skill = val
		}
	case strings.EqualFold(strings.TrimSpace(kind), "prompt"):
		if strings.HasSuffix(strings.ToLower(val), ".md") && !strings.ContainsAny(val, " {") {
			it.Exec = promptFilePrefix + val
		} else {
			it.Prompt = val
		}
	}
	return it, it.Skill != "" || it.Exec != "" || it.Prompt != ""
}

// promptFiles points the prompt-file items of an agent skill's menu at the
// files beside its SKILL.md, by their virtual paths (virtual is the skill
// folder as the model sees it), which resolve the same in every session
// whatever skill is active.
func promptFiles(menu []MenuItem, virtual string) {
	for i, it := range menu {
		if name, ok := strings.CutPrefix(it.Exec, promptFilePrefix); ok {
			menu[i].Exec = path.Join(virtual, name)
		}
	}
}

// tableCells splits a markdown table row into its trimmed cells.
func tableCells(row string) []string {
	row = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(row), "|"), "|")
	parts := strings.Split(row, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// isTableRule reports whether a line is a table's header rule (|---|:--|).
func isTableRule(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "|") && strings.Trim(t, "|-: ") == "" && strings.Contains(t, "-")
}
