package sandbox

import (
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// deniedNames are files every default pattern covers, one or more a
// pattern; a name ending in "/" is a folder, tried with a file inside.
var deniedNames = []string{
	".env", ".ENV", ".env.local", ".env.production", "prod.env", ".envrc",
	".git/", ".Git/", ".git-credentials", ".gitconfig",
	".ssh/", ".aws/", ".azure/", ".gnupg/", ".kube/", ".docker/", ".config/gcloud/",
	".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".htpasswd",
	".vault-token", ".s3cfg", ".boto", ".terraformrc", "terraform.tfstate", "terraform.tfstate.backup",
	"server.pem", "tls.key", "TLS.KEY", "store.p12", "cert.pfx", "keystore.jks", "app.keystore", "vault.kdbx", "putty.ppk",
	"id_rsa", "id_rsa.pub", "id_dsa", "id_ecdsa", "id_ed25519", "id_ed25519.pub", "id_ed25519_sk",
	"credentials", "credentials.json", "service-account-prod.json", "application_default_credentials.json",
	"secrets.yaml", "secrets.yml", "secrets.json", "secrets.toml", "secrets.ini", "secrets.env", "secrets.txt",
	"secrets.properties", "secrets.prod.yaml", "secrets.enc.json", "db.secret", "app.secrets",
}

// allowedNames are ordinary documents that look a little like secrets.
var allowedNames = []string{
	"docs/secrets-management.md", "docs/secrets.md", "environment.md", "docs/env-setup.md", "keys.md",
	"docs/key-decisions.md", "identity.md", "id.md", "git-workflow.md", ".gitignore", ".gitattributes",
	".github/workflows/ci.yml", "credentials-guide.md", "envs/README.md", ".claude/skills/prd/SKILL.md",
	"docs/ssh-setup.md", "docs/aws.md", "keyboard.md", "monkey.yaml", "README.env.md", "docker-compose.yml",
	".config/app.yaml", "docs/pem-files.md", "token-budget.md",
}

// fileOf returns a file for a denied name: the name, or a file inside it.
func fileOf(name string) string {
	if strings.HasSuffix(name, "/") {
		return name + "config"
	}
	return name
}

// Each default name is refused by policy at the top and nested, through
// every way of naming it, and never shows in List, Glob or suggestions.
func TestDefaultDenyEveryName(t *testing.T) {
	e := newEnv(t, nil)
	for _, n := range deniedNames {
		for _, dir := range []string{"", "deep/nested/"} {
			writeHost(t, filepath.Join(e.project, dir+fileOf(n)), "SECRET")
		}
	}
	for _, n := range deniedNames {
		t.Run(n, func(t *testing.T) {
			for _, dir := range []string{"", "deep/nested/"} {
				f := dir + fileOf(n)
				for _, p := range []string{"/project/" + f, f, "./" + f, "{project-root}/" + f, filepath.Join(e.project, f)} {
					data, _, err := e.sb.ReadFile(p)
					if err == nil {
						t.Fatalf("read %s: %q", p, data)
					}
					refused(t, e, err, msgDenied)
					if e.sb.Exists(p) {
						t.Errorf("Exists(%s)", p)
					}
				}
				if strings.HasSuffix(n, "/") {
					_, err := e.sb.List("/project/" + dir + n)
					refused(t, e, err, msgDenied)
				}
				// A near miss suggests nothing denied.
				name := strings.TrimSuffix(n, "/")
				_, _, err := e.sb.ReadFile("/project/" + dir + name + "x")
				if err == nil {
					t.Fatalf("%s%sx exists", dir, name)
				}
				_, near, _ := strings.Cut(err.Error(), "nearby: ")
				for _, v := range strings.Split(near, ", ") {
					if strings.EqualFold(path.Base(strings.TrimSuffix(v, "/")), path.Base(name)) {
						t.Errorf("suggestions name %s: %v", n, err)
					}
				}
			}
		})
	}
	tops := map[string]bool{} // the denied names as a folder lists them
	for _, n := range deniedNames {
		if first := strings.ToLower(strings.Split(n, "/")[0]); first != ".config" {
			tops[first] = true
		}
	}
	shown := func(what string, names []string) {
		t.Helper()
		for _, v := range names {
			for _, seg := range strings.Split(strings.ToLower(strings.TrimSuffix(v, "/")), "/") {
				if tops[seg] || seg == "gcloud" {
					t.Errorf("%s shows %s", what, v)
				}
			}
		}
	}
	for _, dir := range []string{"/project", "/project/deep/nested", "deep", "/project/.config"} {
		names, err := e.sb.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		shown("List "+dir, names)
	}
	if names, _ := e.sb.List("/project"); !strings.Contains(strings.Join(names, " "), "deep/") {
		t.Fatalf("List /project misses ordinary folders: %q", names)
	}
	for _, g := range []string{"/project/**", "**", "**/*", "/project/deep/**/*", "/project/.*", "/project/**/.git/*", "**/id_*", "/project/*.pem", "**/.env*"} {
		got, _ := e.sb.Glob(g)
		shown("Glob "+g, got)
	}
}

// Ordinary documents with names near the secrets stay readable.
func TestDenyKeepsDocuments(t *testing.T) {
	e := newEnv(t, nil)
	for _, n := range allowedNames {
		writeHost(t, filepath.Join(e.project, n), "a document")
	}
	for _, n := range allowedNames {
		if data, _, err := e.sb.ReadFile(n); err != nil || string(data) != "a document" {
			t.Errorf("%s: %q, %v", n, data, err)
		}
	}
	got, _ := e.sb.Glob("/project/**/*.md")
	if len(got) < 10 {
		t.Errorf("Glob misses documents: %q", got)
	}
}

// A configured pattern adds to the defaults, which still apply; the
// session's own /outputs is not screened, /inputs is.
func TestDenyConfiguredAndOwnOutputs(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Deny = []string{"*.private.md", " internal/ ", "Budget*.XLSX"} })
	for _, f := range []string{"notes.private.md", "internal/plan.md", "a/internal/b.md", "budget-2026.xlsx", ".env"} {
		writeHost(t, filepath.Join(e.project, f), "SECRET")
		_, _, err := e.sb.ReadFile(f)
		refused(t, e, err, msgDenied)
	}
	if data, _, err := e.sb.ReadFile("internals.md"); err == nil {
		t.Fatalf("internals.md exists: %q", data)
	} else if strings.Contains(err.Error(), "denied") {
		t.Errorf("a name merely like a pattern is denied: %v", err)
	}
	// /outputs: the session's own files, whatever their names.
	for _, f := range []string{"deploy.env", ".env", "notes.private.md", "keys/id_rsa", ".git/config"} {
		if _, err := e.sb.WriteFile(f, []byte("mine")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"/outputs/" + f, "{output_folder}/" + f} {
			if data, _, err := e.sb.ReadFile(p); err != nil || string(data) != "mine" {
				t.Errorf("own output %s: %q, %v", p, data, err)
			}
		}
	}
	// A relative name denied under /project falls back to the own output.
	if data, v, err := e.sb.ReadFile("deploy.env"); err != nil || string(data) != "mine" || v != "/outputs/deploy.env" {
		t.Errorf("relative own output: %q at %s, %v", data, v, err)
	}
	if names, _ := e.sb.List("/outputs"); !strings.Contains(strings.Join(names, " "), ".env") {
		t.Errorf("/outputs listing hides own files: %q", names)
	}
	if got, _ := e.sb.Glob("/outputs/**/id_rsa"); len(got) != 1 {
		t.Errorf("/outputs glob hides own files: %q", got)
	}
	// /inputs: files users shared are screened.
	writeHost(t, filepath.Join(e.inputs, "shared/.env"), "SECRET")
	writeHost(t, filepath.Join(e.inputs, "brief.md"), "shared brief")
	_, _, err := e.sb.ReadFile("/inputs/shared/.env")
	refused(t, e, err, msgDenied)
	if names, _ := e.sb.List("/inputs/shared"); len(names) != 0 {
		t.Errorf("/inputs listing shows %q", names)
	}
	if data, _, err := e.sb.ReadFile("/inputs/brief.md"); err != nil || string(data) != "shared brief" {
		t.Errorf("/inputs file: %q, %v", data, err)
	}
}

// A link with an innocent name to a denied file or folder is refused too:
// the policy judges the real path as well as the name asked for.
func TestDenyThroughLinks(t *testing.T) {
	e := newEnv(t, nil)
	writeHost(t, filepath.Join(e.project, ".env"), "SECRET")
	writeHost(t, filepath.Join(e.project, ".git/config"), "SECRET")
	symlink(t, "../.env", filepath.Join(e.project, "docs/settings.md"))
	symlink(t, ".git", filepath.Join(e.project, "history"))
	for _, p := range []string{"docs/settings.md", "/project/history/config"} {
		data, _, err := e.sb.ReadFile(p)
		if err == nil {
			t.Fatalf("read %s through a link: %q", p, data)
		}
		refused(t, e, err, msgDenied)
	}
	got, _ := e.sb.Glob("/project/**")
	for _, v := range got {
		if strings.Contains(v, "settings.md") || strings.Contains(v, "history") {
			t.Errorf("Glob shows %s", v)
		}
	}
	if names, _ := e.sb.List("/project/docs"); strings.Contains(strings.Join(names, " "), "settings.md") {
		t.Errorf("List shows the link: %q", names)
	}
}

// A malformed pattern stops the sandbox from opening, naming the pattern,
// rather than leaving a gap in the list.
func TestDenyMalformedPattern(t *testing.T) {
	_, err := Open(Config{ProjectRoot: t.TempDir(), CoreFS: coreFS, Deny: []string{"*.md", "[abc"}})
	if err == nil || !strings.Contains(err.Error(), `deny pattern "[abc" is malformed`) {
		t.Fatalf("got %v", err)
	}
}
