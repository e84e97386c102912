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

// findV4Packs returns the expansion packs of a v4 project: every .bmad-*
// folder beside .bmad-core as the installer leaves them, and every bmad-*
// folder of expansion-packs/ as BMAD's own tree has them, each with an
// agents/ folder, sorted by folder name.
func findV4Packs(root string) []string {
	var packs []string
	add := func(dir, prefix string) {
		entries, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
		for _, d := range entries {
			if base := filepath.Base(d); !contains(v4DirNames, base) && isDir(filepath.Join(d, "agents")) {
				packs = append(packs, d)
			}
		}
	}
	add(root, ".bmad-")
	add(filepath.Join(root, "expansion-packs"), "bmad-")
	return packs
}

// loadV4 loads a v4 tree: bmad-core/agents/*.md with bmad-core/core-config.yaml,
// then each expansion pack's agents (see loadV4Pack).
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
	if core != root {
		for _, pack := range findV4Packs(root) {
			l.loadV4Pack(project, pack)
		}
	}
}

// loadV4Pack loads the agents of a v4 expansion pack (.bmad-creative-writing):
// the pack folder is their {root}, its config.yaml their config, and each
// agent's id is named with the pack ("creative-writing/editor"), so a pack's
// own bmad-orchestrator is no clash with the core's.
func (l *loader) loadV4Pack(project, pack string) {
	if !l.once(pack) {
		return
	}
	module := strings.TrimPrefix(filepath.Base(pack), ".")
	short := strings.TrimPrefix(module, "bmad-")
	home := &Home{Kind: "bmad", Name: module, ProjectRoot: project, BundleRoot: pack, CoreRoot: pack}
	l.loadConfig(home, filepath.Join(pack, "config.yaml"))
	homes := &moduleHomes{l: l, homes: map[string]*Home{module: home}}
	files, _ := filepath.Glob(filepath.Join(pack, "agents", "*.md"))
	for _, f := range files {
		n := len(l.agents)
		l.scanAgent(f, module, homes)
		if len(l.agents) > n {
			a := l.agents[n]
			a.ID = short + "/" + a.ID
		}
	}
}
