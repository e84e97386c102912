package sandbox

import "testing"

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
