package catalog

import (
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir returns the BMAD fixture folder name (for example
// "bmad-v6.0.0-alpha.5") under $AGENTBOT_FIXTURES, or ../shared/fixtures
// next to the repository. Missing fixtures skip the test, except under
// CI=true where they fail it.
func fixtureDir(tb testing.TB, name string) string {
	tb.Helper()
	base := os.Getenv("AGENTBOT_FIXTURES")
	if base == "" {
		dir, err := os.Getwd()
		if err != nil {
			tb.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				tb.Fatal("no go.mod above the test directory")
			}
			dir = parent
		}
		base = filepath.Join(dir, "..", "shared", "fixtures")
	}
	p := filepath.Join(base, name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("fixture %s missing: %v", p, err)
		}
		tb.Skipf("fixture %s missing: %v", p, err)
	}
	return p
}

// readFixture reads one file under a fixture folder.
func readFixture(tb testing.TB, name, rel string) (string, []byte) {
	tb.Helper()
	p := filepath.Join(fixtureDir(tb, name), filepath.FromSlash(rel))
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return p, data
}

// writeFiles creates files (slash paths → content) under dir.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
