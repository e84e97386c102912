package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/vars"
)

func TestResolveAllowed(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		p     string
		write bool
		want  string
	}{
		{"workflows/prd/instructions.md", false, "/project/workflows/prd/instructions.md"},
		{"./workflows//prd/./template.md", false, "/project/workflows/prd/template.md"},
		{"agents/../bundle.yaml", false, "/project/bundle.yaml"},
		{"  agents/pm.md\n", false, "/project/agents/pm.md"},
		{"notes.md", true, "/outputs/notes.md"},
		{"docs/prd.md", true, "/outputs/docs/prd.md"},
		{"/project", false, "/project"},
		{"/project/", false, "/project"},
		{"//project/./a/../b", false, "/project/b"},
		{"/./project/agents/pm.md", false, "/project/agents/pm.md"},
		{"/core/tasks/workflow.md", false, "/core/tasks/workflow.md"},
		{"/outputs/a/b.md", true, "/outputs/a/b.md"},
		{"/outputs/a/../b.md", true, "/outputs/b.md"},
		{"/inputs/upload.pdf", false, "/inputs/upload.pdf"},
		{"/outputs/x.md", false, "/outputs/x.md"},
		// Absolute host paths inside a root map to their virtual path.
		{filepath.Join(e.project, "agents", "pm.md"), false, "/project/agents/pm.md"},
		{e.project, false, "/project"},
		{filepath.Join(e.outputs, "sub", "..", "x.md"), true, "/outputs/x.md"},
		{filepath.Join(e.inputs, "a.txt"), false, "/inputs/a.txt"},
	}
	for _, tt := range tests {
		got, err := e.sb.Resolve(tt.p, tt.write)
		if err != nil {
			t.Errorf("Resolve(%q, %v): %v", tt.p, tt.write, err)
			continue
		}
		if got != tt.want {
			t.Errorf("Resolve(%q, %v) = %q, want %q", tt.p, tt.write, got, tt.want)
		}
	}
}

func TestResolveRefused(t *testing.T) {
	e := newEnv(t, nil)
	other := filepath.Join(e.base, "sessions", "B", "outputs")
	tests := []struct {
		name  string
		p     string
		write bool
		want  string
	}{
		{"relative traversal", "../../etc/passwd", false, "path escapes /project"},
		{"relative traversal write", "../x.md", true, "path escapes /outputs"},
		{"traversal deep", "agents/../../x", false, "path escapes /project"},
		{"virtual traversal", "/project/../..", false, "path escapes /project"},
		{"virtual traversal to sibling", "/project/../outputs/x", false, "path escapes /project"},
		{"outputs traversal", "/outputs/a/../../project/x", true, "path escapes /outputs"},
		{"above slash", "/../project/x", false, "use /project, /core, /outputs or /inputs"},
		{"absolute outside", "/etc/passwd", false, "absolute paths outside the allowed folders are not allowed; use /project, /core, /outputs or /inputs"},
		{"root", "/", false, "absolute paths outside"},
		{"mount-like prefix", "/projects/x", false, "absolute paths outside"},
		{"host temp dir", e.base, false, "absolute paths outside"},
		{"host parent of root", filepath.Join(e.project, ".."), false, "absolute paths outside"},
		{"host sibling with root prefix", e.project + "-other/x", false, "absolute paths outside"},
		{"host escape via dots", filepath.Join(e.project) + "/../secret", false, "absolute paths outside"},
		{"other session outputs", filepath.Join(other, "secret.md"), false, "absolute paths outside"},
		{"absolute outside write", "/etc/cron.d/x", true, "save files under /outputs"},
		{"NUL", "agents/pm.md\x00.txt", false, "NUL byte"},
		{"NUL absolute", "/project/a\x00", false, "NUL byte"},
		{"NUL host", e.project + "/\x00", false, "NUL byte"},
		{"empty", "", false, "empty path"},
		{"blank", " \t\n", true, "empty path"},
		{"too long", strings.Repeat("a/", maxPathLen), false, "path is too long"},
		{"write project", "/project/bundle.yaml", true, "/project is read-only; writes go to /outputs"},
		{"write core", "/core/tasks/workflow.md", true, "/core is read-only; writes go to /outputs"},
		{"write inputs", "/inputs/a.txt", true, "/inputs is read-only; writes go to /outputs"},
		{"write host project", filepath.Join(e.project, "agents", "pm.md"), true, "/project is read-only; writes go to /outputs"},
		{"write outputs dir", "/outputs", true, "needs a file name"},
		{"write outputs dir dot", "/outputs/a/..", true, "needs a file name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.sb.Resolve(tt.p, tt.write)
			if err == nil {
				t.Fatalf("Resolve(%q) = %q, want refusal", tt.p, got)
			}
			refused(t, e, err, tt.want)
		})
	}
}

func TestResolveVariables(t *testing.T) {
	needVars(t)
	e := newEnv(t, nil)
	allowed := []struct {
		p     string
		write bool
		want  string
	}{
		{"{project-root}/workflows/prd/workflow.yaml", false, "/project/workflows/prd/workflow.yaml"},
		{"{bundle-root}/agents/pm.md", false, "/project/agents/pm.md"},
		{"{core-root}/tasks/workflow.md", false, "/core/tasks/workflow.md"},
		{"{output_folder}/prd.md", true, "/outputs/prd.md"},
		{"{output_folder}/{user_name}-notes.md", true, "/outputs/Ada-notes.md"},
	}
	for _, tt := range allowed {
		got, err := e.sb.Resolve(tt.p, tt.write)
		if err != nil || got != tt.want {
			t.Errorf("Resolve(%q, %v) = %q, %v; want %q", tt.p, tt.write, got, err, tt.want)
		}
	}
	refusals := []struct {
		p     string
		write bool
		want  string
	}{
		{"{project-root}/../x", false, "path escapes /project"},
		{"{project-root}/../../etc/passwd", false, "path escapes /project"},
		{"{output_folder}/../project/x", true, "path escapes /outputs"},
		{"{project-root}/x.md", true, "/project is read-only"},
		{"{no-such-var}/x.md", false, "no-such-var"},
	}
	for _, tt := range refusals {
		_, err := e.sb.Resolve(tt.p, tt.write)
		refused(t, e, err, tt.want)
	}
	_, err := e.sb.Resolve("{no-such-var}/x.md", false)
	var unknown *vars.UnknownError
	if !errors.As(err, &unknown) || unknown.Name != "no-such-var" {
		t.Errorf("unknown variable error %v does not wrap *vars.UnknownError", err)
	}
}

func TestResolveHostPathThroughSymlinkedRoot(t *testing.T) {
	var link string
	e := newEnv(t, func(c *Config) {
		// Mount the project through a symlink; host paths given with the
		// real location must still map.
		link = filepath.Join(filepath.Dir(c.ProjectRoot), "project-link")
		if err := os.Symlink(c.ProjectRoot, link); err != nil {
			t.Skipf("symlink: %v", err)
		}
		c.ProjectRoot = link
	})
	for _, p := range []string{
		filepath.Join(e.project, "agents", "pm.md"),
		filepath.Join(link, "agents", "pm.md"),
	} {
		got, err := e.sb.Resolve(p, false)
		if err != nil || got != "/project/agents/pm.md" {
			t.Errorf("Resolve(%q) = %q, %v; want /project/agents/pm.md", p, got, err)
		}
	}
}

func TestResolveUnavailableMount(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.ProjectRoot = ""; c.CoreFS = nil })
	_, err := e.sb.Resolve("/project/x.md", false)
	refused(t, e, err, "/project is not available in this session; use /outputs or /inputs")
	_, err = e.sb.Resolve("agents/pm.md", false)
	refused(t, e, err, "/project is not available")
	_, _, err = e.sb.ReadFile("/core/tasks/workflow.md")
	refused(t, e, err, "/core is not available")
}

func TestOpenErrors(t *testing.T) {
	base := t.TempDir()
	e := &env{base: base}
	_, err := Open(Config{ProjectRoot: filepath.Join(base, "missing")})
	refused(t, e, err, "open /project: the folder cannot be opened")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open error %v does not wrap the not-exist cause", err)
	}
	file := filepath.Join(base, "file")
	writeHost(t, file, "x")
	_, err = Open(Config{OutputRoot: filepath.Join(file, "out")})
	refused(t, e, err, "open /outputs")
	_, err = Open(Config{CoreRoot: file})
	refused(t, e, err, "open /core")
}
