package catalog

import (
	"path/filepath"
	"strings"
)

// v4DirNames are the folder names of a BMAD v4 core inside a project.
var v4DirNames = []string{"bmad-core", ".bmad-core"}

// findV4 returns the bmad-core/ folder of a v4 tree: root/bmad-core,
// root/.bmad-core, or root itself when it is one. It returns "" otherwise.
func findV4(root string) string {
	for _, name := range v4DirNames {
		if d := filepath.Join(root, name); isDir(filepath.Join(d, "agents")) {
			return d
		}
	}
	if cfg := filepath.Join(root, "core-config.yaml"); isDir(filepath.Join(root, "agents")) && (isFile(cfg) || special(cfg)) {
		return root
	}
	return ""
}

// loadV4 loads a v4 tree: bmad-core/agents/*.md with bmad-core/core-config.yaml.
// The v4 {root} is the bmad-core folder, so it is both the bundle root and
// the core root (v4 tasks live in bmad-core/tasks).
func (l *loader) loadV4(root, core string) {
	if !l.once(core) {
		return
	}
	project := root
	if core == root {
		project = filepath.Dir(root)
	}
	module := strings.TrimPrefix(filepath.Base(core), ".")
	home := &Home{Kind: "bmad", Name: module, ProjectRoot: project, BundleRoot: core, CoreRoot: core}
	l.loadConfig(home, filepath.Join(core, "core-config.yaml"))
	homes := &moduleHomes{l: l, homes: map[string]*Home{module: home}}
	files, _ := filepath.Glob(filepath.Join(core, "agents", "*.md"))
	for _, f := range files {
		l.scanAgent(f, module, homes)
	}
}
