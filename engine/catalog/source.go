package catalog

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// findSrc returns the src/ folder of a BMAD source tree: root/src, or root
// itself when it has the shape of one. It returns "" otherwise.
func findSrc(root string) string {
	if d := filepath.Join(root, "src"); isDir(d) && looksLikeSrc(d) {
		return d
	}
	if looksLikeSrc(root) {
		return root
	}
	return ""
}

// looksLikeSrc reports whether dir has the shape of BMAD's src/: a core/
// folder next to modules/ or to a module folder with agents/.
func looksLikeSrc(dir string) bool {
	if !isDir(filepath.Join(dir, "core")) {
		return false
	}
	if isDir(filepath.Join(dir, "modules")) {
		return true
	}
	for _, m := range subdirs(dir) {
		if isDir(filepath.Join(m, "agents")) {
			return true
		}
	}
	return false
}

// sourceModules lists the module folders of src: src/modules/* and every
// other folder directly under src (core, bmm, cis ...).
func sourceModules(src string) []string {
	var out []string
	for _, d := range subdirs(src) {
		if filepath.Base(d) == "modules" {
			out = append(out, subdirs(d)...)
			continue
		}
		out = append(out, d)
	}
	return out
}

// loadSource loads a BMAD source tree: every *.md and *.agent.yaml under a
// module's agents/ folder. Sidecar documents that hold no agent are
// skipped silently.
func (l *loader) loadSource(project, src string) {
	if !l.once(src) {
		return
	}
	core := filepath.Join(src, "core")
	if !isDir(core) {
		core = ""
	}
	mods := sourceModules(src)
	dirs := make(map[string]string, len(mods))
	for _, m := range mods {
		if _, dup := dirs[filepath.Base(m)]; !dup {
			dirs[filepath.Base(m)] = m
		}
	}
	homes := &moduleHomes{l: l, kind: "bmad", project: project, bundle: src, core: core,
		configDir: func(m string) string { return dirs[m] }, homes: map[string]*Home{}}
	for _, mod := range mods {
		name := filepath.Base(mod)
		agents := filepath.Join(mod, "agents")
		if !isDir(agents) {
			continue
		}
		_ = filepath.WalkDir(agents, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				l.problem(p, "%s", reason(err))
				return nil
			}
			if d.IsDir() {
				if p != agents && strings.HasPrefix(d.Name(), ".") {
					return filepath.SkipDir
				}
				return nil
			}
			if isAgentSource(d.Name()) {
				l.scanAgent(p, name, homes)
			}
			return nil
		})
	}
}

// isAgentSource reports whether a file name may hold an agent in a source
// tree: *.md or *.agent.yaml.
func isAgentSource(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".agent.yaml") || strings.HasSuffix(n, ".agent.yml")
}
