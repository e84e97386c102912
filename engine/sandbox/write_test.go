package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWriteCreatesFoldersAndReadsBack(t *testing.T) {
	e := newEnv(t, nil)
	if fi, err := os.Stat(e.outputs); err != nil || !fi.IsDir() {
		t.Fatalf("Open did not create the output root: %v", err)
	}
	v, err := e.sb.WriteFile("docs/prd/prd.md", []byte("# PRD\n"))
	if err != nil || v != "/outputs/docs/prd/prd.md" {
		t.Fatalf("WriteFile = %q, %v", v, err)
	}
	host, err := os.ReadFile(filepath.Join(e.outputs, "docs", "prd", "prd.md"))
	if err != nil || string(host) != "# PRD\n" {
		t.Fatalf("host file = %q, %v", host, err)
	}
	// Overwrite replaces the content; no temporary file is left behind.
	if _, err := e.sb.WriteFile("/outputs/docs/prd/prd.md", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	data, _, err := e.sb.ReadFile("/outputs/docs/prd/prd.md")
	if err != nil || string(data) != "v2" {
		t.Errorf("after overwrite = %q, %v", data, err)
	}
	entries, err := os.ReadDir(filepath.Join(e.outputs, "docs", "prd"))
	if err != nil || len(entries) != 1 || entries[0].Name() != "prd.md" {
		t.Errorf("output folder holds %v, %v; want only prd.md", entries, err)
	}
	// Host paths inside the output root are accepted and mapped.
	if v, err := e.sb.WriteFile(filepath.Join(e.outputs, "host.md"), []byte("h")); err != nil || v != "/outputs/host.md" {
		t.Errorf("WriteFile(host path) = %q, %v", v, err)
	}
}

func TestWriteSizeCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxWrite = 100 })
	if _, err := e.sb.WriteFile("ok.md", []byte(strings.Repeat("x", 100))); err != nil {
		t.Errorf("write at the cap: %v", err)
	}
	_, err := e.sb.WriteFile("big.md", []byte(strings.Repeat("x", 101)))
	refused(t, e, err, "write /outputs/big.md: content is too large to save (101 bytes; the limit is 100 bytes)")
	if _, err := os.Stat(filepath.Join(e.outputs, "big.md")); !os.IsNotExist(err) {
		t.Errorf("oversized content was written: %v", err)
	}
	e2 := newEnv(t, nil)
	_, err = e2.sb.WriteFile("big.md", make([]byte, DefaultMax+1))
	refused(t, e2, err, "the limit is 1.0 MiB")
}

func TestWriteOutsideOutputsRefused(t *testing.T) {
	e := newEnv(t, nil)
	outside := filepath.Join(e.base, "elsewhere.md")
	tests := []struct {
		p    string
		want string
	}{
		{"/project/agents/pm.md", "/project is read-only; writes go to /outputs"},
		{"/project/new.md", "/project is read-only; writes go to /outputs"},
		{"/core/tasks/workflow.md", "/core is read-only; writes go to /outputs"},
		{"/inputs/x.txt", "/inputs is read-only; writes go to /outputs"},
		{"/etc/passwd", "save files under /outputs"},
		{"/tmp/x.md", "save files under /outputs"},
		{outside, "save files under /outputs"},
		{filepath.Join(e.project, "agents", "pm.md"), "/project is read-only"},
		{"../project/x.md", "path escapes /outputs"},
		{"../../x.md", "path escapes /outputs"},
		{"/outputs", "needs a file name"},
		{"a\x00.md", "NUL byte"},
	}
	for _, tt := range tests {
		_, err := e.sb.WriteFile(tt.p, []byte("x"))
		refused(t, e, err, tt.want)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("a file was written outside: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(e.project, "agents", "pm.md")); string(data) != projectFiles["agents/pm.md"] {
		t.Errorf("project file changed: %q", data)
	}
}

func TestWriteOverFolderOrUnderFile(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := e.sb.WriteFile("dir/a.md", []byte("a")); err != nil {
		t.Fatal(err)
	}
	_, err := e.sb.WriteFile("dir", []byte("x"))
	refused(t, e, err, "write /outputs/dir: is a folder")
	_, err = e.sb.WriteFile("dir/a.md/b.md", []byte("x"))
	refused(t, e, err, "cannot create folder /outputs/dir/a.md: a file has that name")
}

func TestHostPath(t *testing.T) {
	e := newEnv(t, nil)
	v, err := e.sb.WriteFile("docs/prd.md", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := e.sb.HostPath(v); err != nil || got != filepath.Join(e.outputs, "docs", "prd.md") {
		t.Errorf("HostPath(%s) = %q, %v", v, got, err)
	}
	// /inputs does not exist yet: the bot asks where to download.
	if got, err := e.sb.HostPath("/inputs/spec.pdf"); err != nil || got != filepath.Join(e.inputs, "spec.pdf") {
		t.Errorf("HostPath(/inputs/spec.pdf) = %q, %v", got, err)
	}
	for p, want := range map[string]string{
		"/project/bundle.yaml":    "only files under /outputs and /inputs have host paths",
		"/core/tasks/workflow.md": "only files under /outputs and /inputs",
		"/outputs/../project":     "path escapes /outputs",
		"/etc/passwd":             "absolute paths outside",
	} {
		_, err := e.sb.HostPath(p)
		refused(t, e, err, want)
	}
	e2 := newEnv(t, func(c *Config) { c.OutputRoot = "" })
	_, err = e2.sb.HostPath("/outputs/x.md")
	refused(t, e2, err, "/outputs is not available")
}

func TestListHidesTemporaryFiles(t *testing.T) {
	e := newEnv(t, nil)
	writeHost(t, filepath.Join(e.outputs, tempPrefix+"abc"+tempSuffix), "partial")
	if _, err := e.sb.WriteFile("done.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if names, err := e.sb.List("/outputs"); err != nil || !slices.Equal(names, []string{"done.md"}) {
		t.Errorf("List(/outputs) = %v, %v", names, err)
	}
}
