package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout is a data folder with two sessions, alice and bob, and a project,
// arranged by build; bob's sandbox is returned with the data folder hidden.
type layout struct {
	project, data string
	bob           *Sandbox
	base          string
}

func newLayout(t *testing.T, build func(base string) (project, data string)) *layout {
	t.Helper()
	base := t.TempDir()
	project, data := build(base)
	writeHost(t, filepath.Join(project, "docs/brief.md"), "the brief")
	writeHost(t, filepath.Join(data, "outputs/alice/secret-plan.md"), "alice's plan")
	writeHost(t, filepath.Join(data, "agentbot.db"), "db")
	sb, err := Open(Config{ProjectRoot: project, CoreFS: coreFS, OutputRoot: filepath.Join(data, "outputs/bob"),
		InputRoot: filepath.Join(data, "inputs/bob"), Vars: testVars, Hidden: []string{data}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return &layout{project: project, data: data, bob: sb, base: base}
}

// Bob can never reach Alice's outputs or the database, whatever the
// layout: data inside the project, the project inside data, a link in the
// project into data, or data reached through a linked parent.
func TestDataFolderHiddenInEveryLayout(t *testing.T) {
	layouts := map[string]func(base string) (string, string){
		"data inside the project": func(b string) (string, string) { return filepath.Join(b, "proj"), filepath.Join(b, "proj/data") },
		"project inside data":     func(b string) (string, string) { return filepath.Join(b, "data/proj"), filepath.Join(b, "data") },
		"link in the project into data": func(b string) (string, string) {
			p, d := filepath.Join(b, "proj"), filepath.Join(b, "elsewhere/data")
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(d, filepath.Join(p, "data")); err != nil {
				t.Fatal(err)
			}
			return p, d
		},
		"data through a linked parent": func(b string) (string, string) {
			real := filepath.Join(b, "real")
			if err := os.MkdirAll(filepath.Join(real, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, filepath.Join(b, "proj")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(b, "proj"), filepath.Join(real, "data") // hidden named by its real path, the project by the link
		},
	}
	for name, build := range layouts {
		t.Run(name, func(t *testing.T) {
			l := newLayout(t, build)
			e := &env{base: l.base}
			for _, p := range []string{
				"/project/data/outputs/alice/secret-plan.md", "data/outputs/alice/secret-plan.md",
				"/project/data/agentbot.db", filepath.Join(l.data, "outputs/alice/secret-plan.md"),
				"/outputs/../alice/secret-plan.md", "/project/../data/outputs/alice/secret-plan.md",
			} {
				if data, _, err := l.bob.ReadFile(p); err == nil {
					t.Errorf("%s: bob read %q", p, data)
				} else {
					noHost(t, e, err.Error())
				}
			}
			for _, dir := range []string{"/project", "/project/data", "/project/data/outputs"} {
				names, _ := l.bob.List(dir)
				for _, n := range names {
					if strings.Contains(n, "data") || strings.Contains(n, "alice") || strings.Contains(n, "agentbot.db") {
						t.Errorf("List %s shows %q", dir, n)
					}
				}
			}
			if got, _ := l.bob.Glob("/project/**/*.md"); strings.Contains(strings.Join(got, " "), "alice") {
				t.Errorf("Glob shows alice's files: %q", got)
			}
			_, _, err := l.bob.ReadFile("/project/docs/brieff.md")
			if err != nil && strings.Contains(err.Error(), "data") {
				t.Errorf("suggestions show the data folder: %v", err)
			}
			// The project's own files and bob's own outputs still work.
			if data, _, err := l.bob.ReadFile("/project/docs/brief.md"); err != nil || string(data) != "the brief" {
				t.Errorf("project file: %q, %v", data, err)
			}
			if _, err := l.bob.WriteFile("notes.md", []byte("bob's")); err != nil {
				t.Fatal(err)
			}
			if data, _, err := l.bob.ReadFile("/outputs/notes.md"); err != nil || string(data) != "bob's" {
				t.Errorf("own output: %q, %v", data, err)
			}
		})
	}
}

// Every default deny pattern refuses reads, at the top and nested, says
// it is a policy, and hides the name from listings, globs and suggestions;
// /outputs is the session's own and is not screened; extra patterns add.
func TestDenyList(t *testing.T) {
	files := []string{".env", ".env.production", "prod.env", ".git/config", ".git/objects/ab/cd", "certs/server.pem", "tls.key",
		"keys/id_rsa", "id_ed25519.pub", ".netrc", ".aws/credentials", ".ssh/config", ".npmrc", ".pypirc",
		".docker/config.json", "store.p12", ".git-credentials", "gcp/credentials.json", "secrets.yaml", "deep/nested/.env"}
	e := newEnv(t, func(c *Config) { c.Deny = []string{"*.private.md"} })
	for _, f := range files {
		writeHost(t, filepath.Join(e.project, f), "SECRET-"+f)
	}
	writeHost(t, filepath.Join(e.project, "notes.private.md"), "SECRET-private")
	writeHost(t, filepath.Join(e.project, "docs/secrets-management.md"), "how we manage secrets")
	for _, f := range append(files, "notes.private.md") {
		for _, p := range []string{"/project/" + f, f, "{project-root}/" + f} {
			_, _, err := e.sb.ReadFile(p)
			refused(t, e, err, "denied by policy")
		}
	}
	if data, _, err := e.sb.ReadFile("docs/secrets-management.md"); err != nil || len(data) == 0 {
		t.Fatalf("an ordinary document was refused: %v", err)
	}
	all, _ := e.sb.Glob("/project/**")
	listed, _ := e.sb.List("/project")
	for _, n := range append(all, listed...) {
		if strings.Contains(n, ".env") || strings.Contains(n, ".git") || strings.Contains(n, ".pem") || strings.Contains(n, "id_rsa") || strings.Contains(n, ".aws") {
			t.Errorf("a denied name is listed: %s", n)
		}
	}
	_, _, err := e.sb.ReadFile("/project/.envv")
	if err != nil && strings.Contains(err.Error(), ".env") && !strings.Contains(err.Error(), ".envv") {
		t.Errorf("suggestions name a denied file: %v", err)
	}
	// The session's own outputs are not screened.
	if _, err := e.sb.WriteFile("deploy.env", []byte("X=1")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := e.sb.ReadFile("/outputs/deploy.env"); err != nil || string(data) != "X=1" {
		t.Fatalf("own output: %q, %v", data, err)
	}
}

// Virtual maps host paths inside a read mount to their virtual path, and
// refuses others.
func TestVirtual(t *testing.T) {
	e := newEnv(t, nil)
	if v, ok := e.sb.Virtual(filepath.Join(e.project, "workflows/prd")); !ok || v != "/project/workflows/prd" {
		t.Fatalf("inside: %q %v", v, ok)
	}
	for _, p := range []string{"/etc/passwd", e.outputs, filepath.Join(e.project, ".env"), "relative/path"} {
		if v, ok := e.sb.Virtual(p); ok {
			t.Errorf("%s mapped to %s", p, v)
		}
	}
}
