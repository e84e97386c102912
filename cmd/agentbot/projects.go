package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"agentbot/engine"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// newProjects wires shared documents: a Slack thread is in its channel's
// project (or the project the channel is bound to), a terminal session in
// cfg.Project or the data folder's terminal project.
func newProjects(cfg *Config, st storage.Projects, log *slog.Logger) *engine.Projects {
	terminal := cfg.Project
	if terminal == "" {
		terminal = storage.TerminalProject
	}
	return &engine.Projects{
		Store: st,
		Of: func(key string) (string, error) {
			return storage.ThreadProject(st, key, terminal)
		},
		Root: storage.Folders{Dir: cfg.DataDir}.ProjectFolder,
	}
}

// projectsSynopsis is what follows "agentbot projects" in its usage.
const projectsSynopsis = "list | show NAME | export NAME DIR [--all-versions] | import NAME DIR"

// projectsUsage is the projects command's usage line.
const projectsUsage = "usage: agentbot projects " + projectsSynopsis

// runProjects lists, shows, exports or imports projects' documents.
func runProjects(ctx context.Context, e *env) int {
	var all bool
	cfg, args, code := parse("projects", e, func(fs *flagSet) {
		fs.BoolVar(&all, "all-versions", false, "export: every version too, under DIR/.history")
	})
	if cfg == nil {
		return code
	}
	want := map[string]int{"list": 1, "show": 2, "export": 3, "import": 3}
	if len(args) == 0 || want[args[0]] != len(args) {
		fmt.Fprintln(e.stderr, projectsUsage)
		return 2
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot projects: %v\n", err)
		return storeExitCode(err)
	}
	defer st.Close()
	switch args[0] {
	case "list":
		err = listProjects(e.stdout, st)
	case "show":
		err = showProject(e.stdout, st, args[1])
	case "export":
		var n int
		if n, err = exportProject(st, args[1], args[2], all); err == nil {
			fmt.Fprintf(e.stdout, "wrote %d files of project %s to %s\n", n, args[1], args[2])
		}
	case "import":
		var n int
		if n, err = importProject(st, args[1], args[2], cfg.MaxFileBytes); err == nil {
			fmt.Fprintf(e.stdout, "imported %d documents into project %s\n", n, args[1])
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot projects %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// listProjects writes every project with its documents' count and last
// change.
func listProjects(w io.Writer, st storage.Projects) error {
	list, err := st.ListProjects()
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tDOCUMENTS\tLAST CHANGE\tCHANNELS")
	for _, p := range list {
		docs, err := st.Documents(p.Name)
		if err != nil {
			return err
		}
		channels, err := st.BoundChannels(p.Name)
		if err != nil {
			return err
		}
		last := "-"
		if len(docs) > 0 {
			last = fmt.Sprintf("%s %s v%d by %s", docs[0].Time.Local().Format("2006-01-02 15:04"), docs[0].Path, docs[0].Version, docs[0].Author())
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", p.Name, len(docs), last, strings.Join(channels, " "))
	}
	return tw.Flush()
}

// showProject writes a project's record and documents, newest first.
func showProject(w io.Writer, st storage.Projects, name string) error {
	p, err := st.Project(name)
	if err != nil {
		return err
	}
	channels, err := st.BoundChannels(name)
	if err != nil {
		return err
	}
	docs, err := st.Documents(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Project:   %s\nCreated:   %s\n", p.Name, p.Created.Local().Format(time.RFC3339))
	if len(channels) > 0 {
		fmt.Fprintf(w, "Channels:  %s\n", strings.Join(channels, " "))
	}
	fmt.Fprintf(w, "Documents: %d\n\n", len(docs))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tVERSION\tBYTES\tAUTHOR\tCHANGED\tTHREAD")
	for _, d := range docs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", d.Path, d.Version, d.Size, d.Author(), d.Time.Local().Format("2006-01-02 15:04"), d.Thread)
	}
	return tw.Flush()
}

// historyDir, inside an export, holds every version of each document.
const historyDir = ".history"

// exportProject writes the latest version of each document to dir in
// BMAD's _bmad-output layout (dir is the output folder: its paths are the
// documents' paths), and with all every version as
// .history/<folder>/<name>.v<N><ext>. Files people shared are left out.
// It returns the number of files written.
func exportProject(st storage.Projects, name, dir string, all bool) (int, error) {
	if _, err := st.Project(name); err != nil {
		return 0, err
	}
	docs, err := st.Documents(name)
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
		data, err := st.DocumentData(name, d.Path, d.Version)
		if err != nil {
			return n, err
		}
		if err := writeExportFile(root, d.Path, data); err != nil {
			return n, err
		}
		n++
		if all {
			added, err := exportHistory(st, root, name, d.Path)
			n += added
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// exportHistory writes every version of one document under .history.
func exportHistory(st storage.Projects, root *os.Root, project, p string) (int, error) {
	versions, err := st.DocumentHistory(project, p)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, v := range versions {
		data, err := st.DocumentData(project, p, v.Version)
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
	return path.Join(historyDir, strings.TrimSuffix(p, ext)+fmt.Sprintf(".v%d", version)+ext)
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

// importProject seeds a project from a folder (an _bmad-output or docs
// folder): each regular file becomes a document at its path inside dir,
// a new version when its bytes differ from the latest. An export's
// .history is skipped, links are not followed, and files over max bytes
// are refused. It returns the number of versions added.
func importProject(st storage.Projects, name, dir string, max int64) (int, error) {
	if err := storage.CheckProjectName(name); err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	if err := st.CreateProject(storage.Project{Name: name}); err != nil && !errors.Is(err, storage.ErrExists) {
		return 0, err
	}
	n := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == historyDir {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		added, err := importFile(st, root, name, p, max)
		if added {
			n++
		}
		return err
	})
	return n, err
}

// importFile adds one file as a document version unless the latest
// version holds the same bytes.
func importFile(st storage.Projects, root *os.Root, project, p string, max int64) (bool, error) {
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
	old, err := st.DocumentData(project, p, 0)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return false, err
	}
	v := transcript.DocVersion{Path: p, Agent: "import", Thread: "agentbot projects import"}
	if _, err := st.SaveDocument(project, v, storage.AnyVersion, data); err != nil {
		return false, fmt.Errorf("%s: %w", p, err)
	}
	return true, nil
}
