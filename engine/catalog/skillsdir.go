package catalog

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// maxSkillDepth bounds how deep a shared skills folder is searched.
const maxSkillDepth = 6

// GenericAgentID is the id of the agent that offers the shared skills when
// no persona is wanted; it is named after the bot.
const GenericAgentID = "agentbot"

// loadSkillsFolder loads a folder of Agent Skills: every folder below it
// holding a SKILL.md with a name and a description in its frontmatter. The
// skills are offered to every agent, and a generic agent offers them on its
// menu. It returns the folder's absolute path, or "" when it cannot be used.
func (l *loader) loadSkillsFolder(dir string) string {
	root := absPath(dir)
	if r := checkDir(root); r != "" {
		l.problem(root, "skills folder %s", r)
		return ""
	}
	home := &Home{Kind: "skills", Name: "skills", Config: map[string]string{}}
	var found []*Skill
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			l.problem(p, "%s", reason(err))
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || strings.Count(filepath.ToSlash(rel), "/") >= maxSkillDepth) {
			return filepath.SkipDir
		}
		sf, err := readSkillFile(p)
		if err != nil {
			l.problem(filepath.Join(p, "SKILL.md"), "%s", reason(err))
			return nil
		}
		if sf == nil {
			return nil
		}
		if sf.fm.Name == "" || sf.fm.Description == "" {
			l.problem(filepath.Join(p, "SKILL.md"), "an Agent Skill needs a name and a description in its frontmatter")
			return filepath.SkipDir
		}
		sf.rel = filepath.ToSlash(rel)
		virtual := SkillsVirtual
		if sf.rel != "." {
			virtual += "/" + sf.rel
		}
		sk := &Skill{Name: sf.fm.Name, Description: sf.fm.Description, Dir: p, Virtual: virtual}
		for _, prev := range found {
			if prev.Name == sk.Name {
				l.problem(p, "skill %s is defined twice; the one in %s is used", sk.Name, prev.Virtual)
				return filepath.SkipDir
			}
		}
		l.addSkill(sk, sf, "", home, nil)
		found = append(found, sk)
		return filepath.SkipDir // a skill's own folders are its resources
	})
	if len(found) == 0 {
		l.problem(root, "no skills found (folders with a SKILL.md)")
		return root
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
	g := &Agent{
		ID: GenericAgentID, Name: "agentbot", Title: "General assistant", Icon: "🤖",
		Description: "A general assistant with no persona that offers the shared skills.",
		Source:      "skill", Path: root, Format: FormatSkill, EntryPoint: true, Home: home,
		Instructions: "You are agentbot, a helpful general assistant in a team chat, with no persona of your own. " +
			"When a request fits one of the skills listed below, load it with load_skill and follow it.",
	}
	for _, sk := range found {
		if sk.Kind == SkillAgent || sk.Kind == SkillAlias {
			continue
		}
		g.Menu = append(g.Menu, MenuItem{Cmd: sk.Name, Description: OneLine(sk.Description, 100), Skill: sk.Name})
	}
	l.add(g)
	return root
}

// OneLine returns the first sentence of s on one line, at most n runes.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > n {
		s = strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}
