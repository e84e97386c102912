package projectfiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Import seeds a project from a folder (an _bmad-output or docs
// folder): each regular file becomes a document at its path inside dir,
// a new version when its bytes differ from the latest. An export's
// .history is skipped, links are not followed, and files over max bytes
// are refused. It returns the number of versions added.
func Import(ctx context.Context, st storage.Projects, name, dir string, max int64) (int, error) {
	if err := storage.CheckProjectName(name); err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	if err := st.CreateProject(ctx, storage.Project{Name: name}); err != nil && !errors.Is(err, storage.ErrExists) {
		return 0, err
	}
	n := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == HistoryDir {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		added, err := importFile(ctx, st, root, name, p, max)
		if added {
			n++
		}
		return err
	})
	return n, err
}

// importFile adds one file as a document version unless the latest
// version holds the same bytes.
func importFile(ctx context.Context, st storage.Projects, root *os.Root, project, p string, max int64) (bool, error) {
	fi, err := root.Stat(p)
	if err != nil {
		return false, err
	}
	if max > 0 && fi.Size() > max {
		return false, fmt.Errorf("%s is %d bytes, over the limit of %d (AGENTBOT_MAX_FILE_BYTES)", p, fi.Size(), max)
	}
	data, err := root.ReadFile(p)
	if err != nil {
		return false, err
	}
	old, err := st.DocumentData(ctx, project, p, 0)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return false, err
	}
	v := transcript.DocVersion{Path: p, Agent: "import", Thread: "agentbot projects import"}
	if _, err := st.SaveDocument(ctx, project, v, storage.AnyVersion, data); err != nil {
		return false, fmt.Errorf("%s: %w", p, err)
	}
	return true, nil
}
