package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// Virtual shows a host path inside a read mount as its virtual path, by
// its real path too; host paths elsewhere, in the data folder, in the
// session's own folders or denied are not shown; a path that is no host
// path stays as it is.
func TestVirtualHostPaths(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real/proj")
	data := filepath.Join(real, "data")
	mkdirs(t, filepath.Join(real, "docs"), filepath.Join(data, "outputs/alice"))
	symlink(t, filepath.Join(base, "real"), filepath.Join(base, "link"))
	writeHost(t, filepath.Join(real, ".env"), "SECRET")
	home, _ := os.UserHomeDir()
	for _, root := range []string{real, filepath.Join(base, "link/proj")} {
		sb, err := Open(Config{ProjectRoot: root, CoreFS: coreFS, Hidden: []string{data}, OutputAliases: []string{"/project/_bmad-output"},
			OutputRoot: filepath.Join(data, "outputs/bob"), InputRoot: filepath.Join(data, "inputs/bob")})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		shown := map[string]string{
			filepath.Join(real, "docs"):                  "/project/docs",
			filepath.Join(real, "docs") + "/":            "/project/docs",
			filepath.Join(base, "link/proj/docs/x.md"):   "/project/docs/x.md",
			filepath.Join(base, "link/proj/docs/../a/b"): "/project/a/b",
			real:                             "/project",
			"/agentbot-no-such-root-7f3a/v1": "/agentbot-no-such-root-7f3a/v1",
		}
		for p, want := range shown {
			if got, ok := sb.Virtual(p); !ok || got != want {
				t.Errorf("project %s: Virtual(%s) = %q, %v; want %q", root, p, got, ok, want)
			}
		}
		for _, p := range []string{
			data, filepath.Join(data, "outputs/alice"), filepath.Join(base, "link/proj/data/outputs"),
			filepath.Join(data, "outputs/bob"), filepath.Join(data, "inputs/bob/x.md"),
			filepath.Join(real, ".env"), filepath.Join(base, "elsewhere/docs"), base, "/", "/etc/passwd",
			os.TempDir(), filepath.Join(os.TempDir(), "no-such-dir-7f3a"), filepath.Join(home, "proj/docs"),
			"/Users/ana/proj/docs", "/home/ana/proj", "/tmp/x", "relative/docs", "",
		} {
			if got, ok := sb.Virtual(p); ok {
				t.Errorf("project %s: Virtual(%s) = %q", root, p, got)
			}
		}
	}
}
