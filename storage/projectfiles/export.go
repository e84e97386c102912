// Package projectfiles moves a project's documents between the store and
// a folder: an export in BMAD's _bmad-output layout (with every version
// under .history when asked), and an import that seeds a project from
// such a folder.
package projectfiles

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"agentbot/storage"
)

// HistoryDir, inside an export, holds every version of each document.
const HistoryDir = ".history"

// Export writes the latest version of each document to dir in
// BMAD's _bmad-output layout (dir is the output folder: its paths are the
// documents' paths), and with all every version as
// .history/<folder>/<name>.v<N><ext>. Files people shared are left out.
// It returns the number of files written.
func Export(ctx context.Context, st storage.Projects, name, dir string, all bool) (int, error) {
	if _, err := storage.FindProject(ctx, st, name); err != nil {
		return 0, err
	}
	docs, err := st.Documents(ctx, name)
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	n := 0
	for _, d := range docs {
		if strings.HasPrefix(d.Path, "/") || !fs.ValidPath(d.Path) {
			continue // a shared file, or a path no folder can hold
		}
		data, err := st.DocumentData(ctx, name, d.Path, d.Version)
		if err != nil {
			return n, err
		}
		if err := writeExportFile(root, d.Path, data); err != nil {
			return n, err
		}
		n++
		if all {
			added, err := exportHistory(ctx, st, root, name, d.Path)
			n += added
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// exportHistory writes every version of one document under .history.
func exportHistory(ctx context.Context, st storage.Projects, root *os.Root, project, p string) (int, error) {
	versions, err := st.DocumentHistory(ctx, project, p)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, v := range versions {
		data, err := st.DocumentData(ctx, project, p, v.Version)
		if err == nil {
			err = writeExportFile(root, historyName(p, v.Version), data)
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// historyName is where an export keeps one version of a document.
func historyName(p string, version int) string {
	ext := path.Ext(p)
	return path.Join(HistoryDir, strings.TrimSuffix(p, ext)+fmt.Sprintf(".v%d", version)+ext)
}

// writeExportFile writes one exported file inside root.
func writeExportFile(root *os.Root, name string, data []byte) error {
	if dir := path.Dir(name); dir != "." {
		if err := root.MkdirAll(filepath.FromSlash(dir), 0o755); err != nil {
			return err
		}
	}
	return root.WriteFile(filepath.FromSlash(name), data, 0o644)
}
