package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"agentbot/cmd/agentbot/stores"
	"agentbot/storage"
	"agentbot/storage/projectfiles"
)

// ProjectsSynopsis is what follows "agentbot projects" in its usage.
const ProjectsSynopsis = "list | show NAME | export NAME DIR [--all-versions] | import NAME DIR"

// projectsUsage is the projects command's usage line.
const projectsUsage = "usage: agentbot projects " + ProjectsSynopsis

// Projects is agentbot projects: its flags, the settings it reads and
// where it writes.
type Projects struct {
	Stdout, Stderr io.Writer
	Store          stores.Store
	// AllVersions makes export write every version too, under DIR/.history.
	AllVersions bool
	// MaxFileBytes is the largest document import takes (--max-file-bytes).
	MaxFileBytes int64
}

// Run lists, shows, exports or imports projects' documents, as args (the
// subcommand and its arguments) say, and returns the exit code.
func (o *Projects) Run(ctx context.Context, args []string) int {
	want := map[string]int{"list": 1, "show": 2, "export": 3, "import": 3}
	if len(args) == 0 || want[args[0]] != len(args) {
		fmt.Fprintln(o.Stderr, projectsUsage)
		return 2
	}
	st, code := o.open(ctx, args[0])
	if st == nil {
		return code
	}
	defer st.Close()
	var err error
	switch args[0] {
	case "list":
		err = listProjects(ctx, o.Stdout, st)
	case "show":
		err = showProject(ctx, o.Stdout, st, args[1])
	case "export":
		var p storage.Project
		if p, err = storage.FindProject(ctx, st, args[1]); err == nil {
			var n int
			if n, err = projectfiles.Export(ctx, st, p.Name, args[2], o.AllVersions); err == nil {
				fmt.Fprintf(o.Stdout, "wrote %d files of project %s to %s\n", n, p.Name, args[2])
			}
		}
	case "import":
		var n int
		if n, err = projectfiles.Import(ctx, st, args[1], args[2], o.MaxFileBytes); err == nil {
			fmt.Fprintf(o.Stdout, "imported %d documents into project %s\n", n, args[1])
		}
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot projects %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// open opens the store for verb, saying which store it reads; list, show
// and export never make one (stores.NoStoreError: list then has nothing to
// list). It returns nil and the exit code when there is none to use.
func (o *Projects) open(ctx context.Context, verb string) (storage.Backend, int) {
	if verb == "import" {
		st, err := o.Store.Open(ctx)
		if err != nil {
			fmt.Fprintf(o.Stderr, "agentbot projects: %v\n", err)
			return nil, stores.ExitCode(err)
		}
		return st, 0
	}
	st, err := o.Store.OpenExisting(ctx)
	var none *stores.NoStoreError
	switch {
	case errors.As(err, &none):
		fmt.Fprintf(o.Stderr, "agentbot projects %s: %v\n", verb, err)
		if verb == "list" {
			return nil, 0
		}
		return nil, 1
	case err != nil:
		fmt.Fprintf(o.Stderr, "agentbot projects: %v\n", err)
		if hint := o.Store.LockedHint(err); hint != "" {
			fmt.Fprintf(o.Stderr, "agentbot projects: %s\n", hint)
		}
		return nil, stores.ExitCode(err)
	}
	fmt.Fprintf(o.Stderr, "agentbot projects %s: reading %s\n", verb, o.Store.Where(false))
	return st, 0
}

// listProjects writes every project with its documents' count and last
// change.
func listProjects(ctx context.Context, w io.Writer, st storage.Projects) error {
	list, err := st.ListProjects(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tDOCUMENTS\tLAST CHANGE\tCHANNELS")
	for _, p := range list {
		docs, err := st.Documents(ctx, p.Name)
		if err != nil {
			return err
		}
		channels, err := st.BoundChannels(ctx, p.Name)
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
func showProject(ctx context.Context, w io.Writer, st storage.Projects, name string) error {
	p, err := storage.FindProject(ctx, st, name)
	if err != nil {
		return err
	}
	channels, err := st.BoundChannels(ctx, p.Name)
	if err != nil {
		return err
	}
	docs, err := st.Documents(ctx, p.Name)
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
