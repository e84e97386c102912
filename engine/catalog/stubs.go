package catalog

import (
	"path/filepath"
	"regexp"
	"strings"
)

// stubLoad finds the agent file a BMAD 6.0–6.2 stub skill points at: "LOAD
// the FULL agent file from {project-root}/_bmad/bmm/agents/pm.md".
var stubLoad = regexp.MustCompile(`(?i)load\s+the\s+full\s+agent\s+file\s+from\s+(?:@|\{project-root\}/)?([A-Za-z0-9_./-]+\.(?:md|xml))`)

// stubSkill is an agent skill of BMAD 6.0 to 6.2: a short SKILL.md that
// tells the tool to load the full agent file, where the persona, activation
// and menu are.
type stubSkill struct {
	skill *Skill
	file  string // the agent file, absolute
}

// stubTarget returns the agent file a stub SKILL.md points at, relative to
// the project, or "" when the body is not a stub.
func stubTarget(body string) string {
	if len(body) > 4<<10 {
		return "" // a full skill that mentions the phrase is no stub
	}
	m := stubLoad.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	rel := filepath.Clean(filepath.FromSlash(m[1]))
	if !filepath.IsLocal(rel) {
		return ""
	}
	return rel
}

// findStubs lists the stub skills among a project's skill folders.
func findStubs(project string, byName map[string]*skillFile) map[string]string {
	out := map[string]string{}
	for name, sf := range byName {
		if rel := stubTarget(sf.body); rel != "" {
			out[name] = filepath.Join(project, rel)
		}
	}
	return out
}

// bindStubs makes each stub skill the agent of the file it points at: the
// agent the manifest or the scan loaded from that file takes the stub's
// name, so people may pick it by either; a file nothing loaded is loaded
// here. A stub whose file is missing is a problem naming both.
func (l *loader) bindStubs(project, bmadDir string, stubs []stubSkill, homes *moduleHomes) {
	for _, st := range stubs {
		var a *Agent
		for _, x := range l.agents {
			if x.Path == st.file && x.Format != FormatSkill {
				a = x
				break
			}
		}
		if a == nil {
			if !isFile(st.file) && !special(st.file) {
				rel, _ := filepath.Rel(project, st.file)
				l.problem(filepath.Join(st.skill.Dir, "SKILL.md"), "skill %s loads the agent file %s, which does not exist", st.skill.Name, filepath.ToSlash(rel))
				continue
			}
			got, err := readAgent(st.file)
			if err != nil {
				l.problem(st.file, "loaded by skill %s: %s", st.skill.Name, reason(err))
				continue
			}
			a = got
			l.addModuleAgent(a, moduleOf(bmadDir, st.file), homes)
		}
		if a.SkillName == "" {
			a.SkillName = st.skill.Name
		}
		fill(&a.Description, st.skill.Description)
		fill(&st.skill.Module, a.Module)
	}
}

// execSkill returns the skill an exec="skill:NAME" handler names, or "".
func execSkill(exec string) string {
	name, ok := strings.CutPrefix(strings.TrimSpace(exec), "skill:")
	if !ok {
		return ""
	}
	if m := skillID.FindStringSubmatch(strings.TrimSpace(name)); m != nil {
		return m[1]
	}
	return ""
}

// skillModules are the module names older skill names carry after "bmad-"
// (bmad-bmm-create-prd is bmad-create-prd today).
var skillModules = []string{"bmm", "bmb", "cis", "tea", "gds", "core"}

// skillVariants are the other names a skill named name may be installed
// under, in order: the same base name without "-preview" or
// "-new-preview", with "-preview", and without an older module infix.
func skillVariants(name string) []string {
	var out []string
	if base, ok := strings.CutSuffix(name, "-new-preview"); ok {
		out = append(out, base)
	}
	if base, ok := strings.CutSuffix(name, "-preview"); ok {
		out = append(out, base)
	} else {
		out = append(out, name+"-preview")
	}
	if rest, ok := strings.CutPrefix(name, "bmad-"); ok {
		for _, m := range skillModules {
			if r, ok := strings.CutPrefix(rest, m+"-"); ok {
				out = append(out, "bmad-"+r)
			}
		}
	}
	return out
}

// variantOf returns the installed skill (by known) of the same base name
// as name, or "".
func variantOf(name string, known func(string) bool) string {
	for _, v := range skillVariants(name) {
		if known(v) {
			return v
		}
	}
	return ""
}
