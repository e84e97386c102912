package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// twoSessions is a data folder holding the sessions alice and bob and a
// project, laid out by a test; ways are the paths that lead to Alice's
// document from bob's sandbox when nothing hides the data folder.
type twoSessions struct {
	base, project, data string
	hidden              string // the data folder as agentbot names it
	ways                []string
	tries               []string // more paths to try, which fail anyway
}

// open opens bob's sandbox over the layout, hiding l.hidden when hide is set.
func (l *twoSessions) open(t *testing.T, hide bool) *Sandbox {
	t.Helper()
	cfg := Config{ProjectRoot: l.project, CoreFS: coreFS, Vars: testVars,
		OutputRoot: filepath.Join(l.data, "outputs/bob"), InputRoot: filepath.Join(l.data, "inputs/bob")}
	if hide {
		cfg.Hidden = []string{l.hidden}
	}
	sb, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// mkdirs creates folders.
func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// symlink makes link point at target.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	mkdirs(t, filepath.Dir(link))
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlink: %v", err)
	}
}

// sessionLayouts are the ways a data folder and a project can sit.
var sessionLayouts = map[string]func(t *testing.T, b string) *twoSessions{
	"data inside the project": func(t *testing.T, b string) *twoSessions {
		p := filepath.Join(b, "proj")
		d := filepath.Join(p, "data")
		doc := "data/outputs/alice/secret-plan.md"
		return &twoSessions{project: p, data: d, hidden: d, ways: []string{
			"/project/" + doc, doc, "./" + doc, "{project-root}/" + doc, "/project/docs/../" + doc,
			"//project/./" + doc, filepath.Join(p, doc),
		}}
	},
	"data inside the project, named relative": func(t *testing.T, b string) *twoSessions {
		p := filepath.Join(b, "proj")
		d := filepath.Join(p, "data")
		mkdirs(t, p)
		t.Chdir(p)
		return &twoSessions{project: p, data: d, hidden: "./data", ways: []string{"/project/data/outputs/alice/secret-plan.md"}}
	},
	"a link inside the project into the data inside it": func(t *testing.T, b string) *twoSessions {
		p := filepath.Join(b, "proj")
		d := filepath.Join(p, ".agentbot")
		symlink(t, "../.agentbot/outputs", filepath.Join(p, "docs/sessions"))
		return &twoSessions{project: p, data: d, hidden: d, ways: []string{
			"/project/docs/sessions/alice/secret-plan.md", "docs/sessions/alice/secret-plan.md",
			"/project/.agentbot/outputs/alice/secret-plan.md",
		}}
	},
	"project inside data": func(t *testing.T, b string) *twoSessions {
		d := filepath.Join(b, "data")
		return &twoSessions{project: filepath.Join(d, "proj"), data: d, hidden: d}
	},
	"project deep inside data": func(t *testing.T, b string) *twoSessions {
		d := filepath.Join(b, "data")
		return &twoSessions{project: filepath.Join(d, "teams/a/proj"), data: d, hidden: d}
	},
	"data is the project": func(t *testing.T, b string) *twoSessions {
		d := filepath.Join(b, "proj")
		return &twoSessions{project: d, data: d, hidden: d, ways: []string{
			"/project/outputs/alice/secret-plan.md", "outputs/alice/secret-plan.md",
		}}
	},
	"a link in the project to data outside": func(t *testing.T, b string) *twoSessions {
		p, d := filepath.Join(b, "proj"), filepath.Join(b, "var/data")
		mkdirs(t, d)
		symlink(t, d, filepath.Join(p, "data"))
		return &twoSessions{project: p, data: d, hidden: d}
	},
	"data named through a linked parent": func(t *testing.T, b string) *twoSessions {
		real := filepath.Join(b, "real")
		mkdirs(t, filepath.Join(real, "proj"))
		symlink(t, real, filepath.Join(b, "link"))
		p := filepath.Join(real, "proj")
		return &twoSessions{project: p, data: filepath.Join(p, "data"), hidden: filepath.Join(b, "link/proj/data"),
			ways:  []string{"/project/data/outputs/alice/secret-plan.md", filepath.Join(p, "data/outputs/alice/secret-plan.md")},
			tries: []string{filepath.Join(b, "link/proj/data/outputs/alice/secret-plan.md")}}
	},
	"project named through a linked parent": func(t *testing.T, b string) *twoSessions {
		real := filepath.Join(b, "real")
		mkdirs(t, filepath.Join(real, "proj"))
		symlink(t, real, filepath.Join(b, "link"))
		return &twoSessions{project: filepath.Join(b, "link/proj"), data: filepath.Join(real, "proj/data"),
			hidden: filepath.Join(real, "proj/data"), ways: []string{
				"/project/data/outputs/alice/secret-plan.md", filepath.Join(b, "link/proj/data/outputs/alice/secret-plan.md"),
				filepath.Join(real, "proj/data/outputs/alice/secret-plan.md"),
			}}
	},
}

// Whatever the layout, bob never reads, lists, globs or is told of Alice's
// outputs or the database, by any path; a path into the hidden folder gets
// the answer of a missing one; the project and bob's own files still work.
func TestTwoSessionsEveryLayout(t *testing.T) {
	for name, build := range sessionLayouts {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			l := build(t, base)
			l.base = base
			writeHost(t, filepath.Join(l.project, "docs/brief.md"), "the brief")
			writeHost(t, filepath.Join(l.data, "outputs/alice/secret-plan.md"), "alice's plan")
			writeHost(t, filepath.Join(l.data, "inputs/alice/upload.md"), "alice's upload")
			writeHost(t, filepath.Join(l.data, "agentbot.db"), "db")

			// Without the policy the ways do reach Alice's document.
			open := l.open(t, false)
			for _, w := range l.ways {
				if data, _, err := open.ReadFile(w); err != nil || string(data) != "alice's plan" {
					t.Fatalf("control: %s: %q, %v", w, data, err)
				}
			}

			bob := l.open(t, true)
			e := &env{base: base}
			shows := func(what, text string) {
				t.Helper()
				noHost(t, e, text)
				for _, bad := range []string{"alice", "secret-plan", "agentbot.db", "upload.md"} {
					if strings.Contains(text, bad) {
						t.Errorf("%s shows %q: %s", what, bad, text)
					}
				}
			}
			ways := append([]string{
				"/project/../outputs/alice/secret-plan.md", "/outputs/../alice/secret-plan.md",
				"../outputs/alice/secret-plan.md", "/inputs/../../outputs/alice/secret-plan.md",
				filepath.Join(l.data, "outputs/alice/secret-plan.md"), filepath.Join(l.data, "agentbot.db"),
			}, append(l.ways, l.tries...)...)
			for _, w := range ways {
				if data, _, err := bob.ReadFile(w); err == nil {
					t.Errorf("bob read %s: %q", w, data)
				} else {
					noHost(t, e, err.Error())
				}
				if bob.Exists(w) {
					t.Errorf("Exists(%s)", w)
				}
			}
			for _, dir := range []string{"/project", "/project/data", "/project/data/outputs", "/project/outputs",
				"/project/docs", "/project/docs/sessions", "data/outputs", "outputs", "/outputs", "/inputs"} {
				names, err := bob.List(dir)
				if err != nil {
					noHost(t, e, err.Error())
				}
				shows("List "+dir, strings.Join(names, " "))
				for _, n := range names {
					if n == "data/" || n == "outputs/" || n == ".agentbot/" || n == "sessions/" {
						t.Errorf("List %s shows %s", dir, n)
					}
				}
			}
			for _, g := range []string{"/project/**", "**/secret-plan.md", "**/*.md", "/project/*/outputs/*/*",
				"/project/**/alice/*", "data/**", "outputs/**", "/project/docs/sessions/*/*"} {
				got, err := bob.Glob(g)
				if err != nil {
					noHost(t, e, err.Error())
				}
				shows("Glob "+g, strings.Join(got, " "))
			}
			for _, miss := range []string{"/project/dat", "/project/outputz/alice", "/project/data/outputs/alice/secret-plan.mdx",
				"/project/docs/sessionz/x.md", "/project/docs/brieff.md", "secret-plan.md", "agentbot.dbx"} {
				_, _, err := bob.ReadFile(miss)
				if err == nil {
					t.Fatalf("%s exists", miss)
				}
				msg := err.Error()
				_, near, _ := strings.Cut(msg, "nearby:")
				shows("suggestions for "+miss, near)
				noHost(t, e, msg)
			}
			// A path into the hidden folder answers as a missing one does:
			// nothing tells Alice's session apart from one that never was.
			for _, w := range l.ways {
				_, _, err := bob.ReadFile(w)
				_, _, err2 := bob.ReadFile(strings.ReplaceAll(w, "alice", "nobody"))
				if err == nil || err2 == nil || strings.ReplaceAll(err.Error(), "alice", "nobody") != err2.Error() {
					t.Errorf("%s: %v, but for a session that never was: %v", w, err, err2)
				}
				if err != nil && strings.Contains(err.Error(), "denied") {
					t.Errorf("%s: a hidden path is reported as denied: %v", w, err)
				}
			}

			// The project's files and bob's own stay reachable.
			if data, _, err := bob.ReadFile("/project/docs/brief.md"); name != "data is the project" && (err != nil || string(data) != "the brief") {
				t.Errorf("project file: %q, %v", data, err)
			}
			if got, _ := bob.Glob("**/brief.md"); name != "data is the project" && len(got) != 1 {
				t.Errorf("Glob of the project's file: %q", got)
			}
			if _, err := bob.WriteFile("notes.md", []byte("bob's")); err != nil {
				t.Fatal(err)
			}
			writeHost(t, filepath.Join(l.data, "inputs/bob/shared.md"), "bob's upload")
			for p, want := range map[string]string{"/outputs/notes.md": "bob's", "notes.md": "bob's", "/inputs/shared.md": "bob's upload", "shared.md": "bob's upload"} {
				if data, _, err := bob.ReadFile(p); err != nil || string(data) != want {
					t.Errorf("own file %s: %q, %v", p, data, err)
				}
			}
		})
	}
}

// A project that is the data folder shows nothing at all rather than the
// sessions in it.
func TestDataFolderAsProjectShowsNothing(t *testing.T) {
	base := t.TempDir()
	writeHost(t, filepath.Join(base, "bundle.yaml"), "x")
	sb, err := Open(Config{ProjectRoot: base, CoreFS: coreFS, Hidden: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if _, _, err := sb.ReadFile("/project/bundle.yaml"); err == nil {
		t.Fatal("a file of the data folder is readable")
	}
	if names, _ := sb.List("/project"); len(names) != 0 {
		t.Fatalf("List shows %q", names)
	}
}

// The hidden folder is recognised by identity too, so the same folder
// reached under another name (a case-insensitive file system, a bind
// mount) is hidden, even where its path does not match.
func TestHiddenByIdentity(t *testing.T) {
	base := t.TempDir()
	mkdirs(t, filepath.Join(base, "real/data/outputs"))
	symlink(t, filepath.Join(base, "real"), filepath.Join(base, "other"))
	m := &mount{host: filepath.Join(base, "other"), hide: newHidden([]string{filepath.Join(base, "real/data")})}
	// The path as a bind mount would show it: not resolved to real/.
	for _, h := range []string{filepath.Join(base, "other/data"), filepath.Join(base, "other/data/outputs/x.md")} {
		if !m.hides(h) {
			t.Errorf("%s is not hidden", h)
		}
	}
	if m.hides(filepath.Join(base, "other")) || m.hides(filepath.Join(base, "other/docs/x.md")) {
		t.Error("the rest of the mount is hidden")
	}
}
