package catalog

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	txt "agentbot/engine/text"
)

// maxSkillDepth bounds how deep a shared skills folder is searched.
const maxSkillDepth = 6

// GenericAgentID is the id of the agent that offers the shared skills when
// no persona is wanted; it is named after the bot.
const GenericAgentID = "agentbot"

// skipFolders are the folders a shared skills folder's search never enters:
// version control, caches and dependency trees, and the secrets the
// sandbox never shows. Other dot-folders (.curated, .system) are searched.
var skipFolders = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".bzr": true, ".jj": true, "_darcs": true, "CVS": true,
	"node_modules": true, "__pycache__": true, ".cache": true, ".pytest_cache": true, ".mypy_cache": true,
	".ruff_cache": true, ".venv": true, "venv": true, ".tox": true, ".next": true, ".turbo": true,
	".ssh": true, ".aws": true, ".azure": true, ".gnupg": true, ".kube": true, ".docker": true,
}

// skillWalk is one search of a shared skills folder.
type skillWalk struct {
	l     *loader
	root  string // the folder, symlinks resolved
	home  *Home
	found []*Skill
	byKey map[string]*Skill // by lower-case name
	seen  map[string]bool   // real folders searched, against loops
}

// loadSkillsFolder loads a folder of Agent Skills: every folder below it
// holding a SKILL.md with a name and a description in its frontmatter. The
// search follows symbolic links that stay inside the folder (the sandbox
// refuses the others, so they are reported), never twice into one real
// folder, and searches dot-folders except those of skipFolders. The
// skills are offered to every agent, and a generic agent offers them on
// its menu. It returns the folder's absolute path, or "" when it cannot be
// used.
func (l *loader) loadSkillsFolder(dir string) string {
	root := absPath(dir)
	if r := checkDir(root); r != "" {
		l.problem(root, "skills folder %s", r)
		return ""
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	w := &skillWalk{l: l, root: root, home: &Home{Kind: "skills", Name: "skills", Config: map[string]string{}},
		byKey: map[string]*Skill{}, seen: map[string]bool{}}
	w.visit(root, root, ".", 0)
	found := w.found
	if len(found) == 0 {
		l.problem(root, "no skills found (folders with a SKILL.md)")
		return root
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Name < found[j].Name })
	copy(l.skills[len(l.skills)-len(found):], found) // the catalog's list too, by name
	g := &Agent{
		ID: GenericAgentID, Name: "agentbot", Title: "General assistant", Icon: "🤖",
		Description: "A general assistant with no persona that offers the shared skills.",
		Source:      "skill", Path: root, Format: FormatSkill, EntryPoint: true, Home: w.home,
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
	if utf8.RuneCountInString(s) > n {
		s = strings.TrimSpace(txt.Cut(s, n-1, "")) + "…"
	}
	return s
}

// visit searches the folder dir (rel from the root, slash form): a folder
// with a SKILL.md is a skill, whose own folders are its resources; any
// other folder is searched below, up to maxSkillDepth.
func (w *skillWalk) visit(dir, real, rel string, depth int) {
	if w.seen[real] {
		return // a second way into one folder: its skills are loaded once
	}
	w.seen[real] = true
	sf, err := readSkillFile(dir)
	if err != nil {
		w.l.problem(filepath.Join(dir, "SKILL.md"), "%s", reason(err))
		return
	}
	if sf != nil {
		w.add(sf, dir, rel)
		return
	}
	if depth >= maxSkillDepth {
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.l.problem(dir, "%s", reason(err))
		return
	}
	for _, e := range entries {
		if skipFolders[e.Name()] {
			continue
		}
		p, pReal := filepath.Join(dir, e.Name()), filepath.Join(real, e.Name())
		switch {
		case e.IsDir():
		case e.Type()&fs.ModeSymlink != 0 && isDir(p):
			target, ok := w.inside(p)
			if !ok {
				continue
			}
			pReal = target
		default:
			continue
		}
		w.visit(p, pReal, path.Join(rel, e.Name()), depth+1)
	}
}

// inside returns the real folder the link p leads to, and whether it is
// inside the root, where the sandbox follows it; a link out of it, or back
// into the folder holding it (a loop), is reported.
func (w *skillWalk) inside(p string) (string, bool) {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		w.l.problem(p, "link: %s", reason(err))
		return "", false
	}
	rel, err := filepath.Rel(w.root, target)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		w.l.problem(p, "link leads out of the skills folder; the sandbox does not follow it")
		return "", false
	}
	if parent, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		if up, err := filepath.Rel(target, parent); err == nil && (up == "." || filepath.IsLocal(up)) {
			w.l.problem(p, "link loops back to a folder holding it; not followed")
			return "", false
		}
	}
	return target, true
}

// add lists the skill of dir/SKILL.md; a skill without a name and a
// description, or with a name already taken, is a problem.
func (w *skillWalk) add(sf *skillFile, dir, rel string) {
	if sf.fm.Name == "" || sf.fm.Description == "" {
		w.l.problem(filepath.Join(dir, "SKILL.md"), "an Agent Skill needs a name and a description in its frontmatter")
		return
	}
	sf.rel = rel
	virtual := SkillsVirtual
	if rel != "." {
		virtual += "/" + rel
	}
	sk := &Skill{Name: sf.fm.Name, Description: sf.fm.Description, Dir: dir, Virtual: virtual}
	if prev, ok := w.byKey[strings.ToLower(sk.Name)]; ok {
		w.l.problem(dir, "skill %s is defined twice; the one in %s is used", sk.Name, prev.Virtual)
		return
	}
	w.l.addSkill(sk, sf, "", w.home, nil)
	w.byKey[strings.ToLower(sk.Name)] = sk
	w.found = append(w.found, sk)
}
