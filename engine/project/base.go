package project

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/sandbox"
)

// BaseLayer is a folder of the BMAD root a project shows among its
// documents, read-only: a save there puts a project version on top.
type BaseLayer struct {
	dir    string // host folder
	prefix string // document path of its files ("" or "docs/")
	// screen refuses what no read mount of dir shows: secret names and
	// hidden folders (agentbot's data folder, the project's own working
	// copy). /outputs shows every name, so such a file is never copied
	// into the project.
	screen sandbox.CopyScreen
}

// LiteralOutputFolder is the folder installers up to BMAD 6.10 create at
// the project root under the unresolved name "{output_folder}"; its files
// are the project's documents too.
const LiteralOutputFolder = "{output_folder}"

// BaseLayers are the BMAD root's own artifact folder, shown as the root
// of the project's documents (and so is the literal "{output_folder}"
// folder older installers create), and its project_knowledge folder, shown
// under its own name (none without a BMAD root). Each is screened with
// the sandbox's policy of hidden folders and deny patterns.
func BaseLayers(a *catalog.Agent, hidden, deny []string) []BaseLayer {
	if a == nil || a.Home == nil || a.Home.ProjectRoot == "" || a.Home.OutputFolder == "" {
		return nil
	}
	dirs := []string{filepath.Join(a.Home.ProjectRoot, filepath.FromSlash(a.Home.OutputFolder))}
	prefixes := []string{""}
	if lit := filepath.Join(a.Home.ProjectRoot, LiteralOutputFolder); lit != dirs[0] {
		if st, err := os.Stat(lit); err == nil && st.IsDir() {
			dirs = append(dirs, lit)
			prefixes = append(prefixes, "")
		}
	}
	if k := KnowledgeFolder(a); k != "" {
		dirs = append(dirs, filepath.Join(a.Home.ProjectRoot, filepath.FromSlash(k)))
		prefixes = append(prefixes, k+"/")
	}
	var layers []BaseLayer
	for i, dir := range dirs {
		screen, err := sandbox.NewCopyScreen(dir, hidden, deny)
		if err != nil {
			return nil // the sandbox refuses the same patterns when it opens
		}
		layers = append(layers, BaseLayer{dir: dir, prefix: prefixes[i], screen: screen})
	}
	return layers
}

// KnowledgeFolder is BMAD's project_knowledge folder ("docs" for
// "{project-root}/docs"), relative to the BMAD root, when it is a folder
// of its own beside the artifact folder ("" otherwise: missing, outside
// the root, or inside the artifact folder, which is a base layer
// already).
func KnowledgeFolder(a *catalog.Agent) string {
	if a == nil || a.Home == nil || a.Home.OutputFolder == "" {
		return ""
	}
	k := strings.TrimSpace(a.Home.Config["project_knowledge"])
	k = strings.Trim(strings.TrimPrefix(k, "{project-root}"), "/")
	if k == "" || strings.ContainsAny(k, "{}") || !filepath.IsLocal(filepath.FromSlash(k)) {
		return ""
	}
	k = path.Clean(k)
	out := a.Home.OutputFolder
	if k == out || strings.HasPrefix(k, out+"/") || strings.HasPrefix(out, k+"/") {
		return ""
	}
	return k
}

// WriteRooted writes data to name inside r, creating its folders.
func WriteRooted(r *os.Root, name string, data []byte) error {
	if dir := filepath.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := r.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "write", Path: name, Err: errors.New("not a regular file")}
	}
	return r.WriteFile(name, data, 0o644)
}
