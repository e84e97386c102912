package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkResolvePath(b *testing.B) {
	dir := b.TempDir()
	sb, err := Open(Config{ProjectRoot: dir, CoreFS: coreFS, OutputRoot: dir + "/out", Vars: testVars})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	cases := []struct {
		name, p string
		write   bool
	}{
		{"relative", "workflows/prd/instructions.md", false},
		{"virtual", "/project/workflows/prd/../prd/template.md", false},
		{"write", "docs/prd.md", true},
		{"variable", "{project-root}/workflows/prd/workflow.yaml", false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if c.name == "variable" && varsPanics() {
				b.Skip("vars not implemented yet")
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sb.Resolve(c.p, c.write); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGlobScreened globs a project of 5,000 files with the data
// folder inside it hidden: the policy judges every entry walked.
func BenchmarkGlobScreened(b *testing.B) {
	proj := filepath.Join(b.TempDir(), "proj")
	for i := range 50 {
		dir := filepath.Join(proj, fmt.Sprintf("d%d/e", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.md", j)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	sb, err := Open(Config{ProjectRoot: proj, CoreFS: coreFS, Vars: testVars, Hidden: []string{filepath.Join(proj, "data")}})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	b.ReportAllocs()
	for b.Loop() {
		if got, err := sb.Glob("/project/**/*.md"); len(got) == 0 {
			b.Fatal(got, err)
		}
	}
}
