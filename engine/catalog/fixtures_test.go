package catalog

import (
	"os"
	"path/filepath"
	"testing"

	"agentbot/engine/fixtures"
)

// readFixture reads one file under a fixture folder.
func readFixture(tb testing.TB, name, rel string) (string, []byte) {
	tb.Helper()
	p := filepath.Join(fixtures.Dir(tb, name), filepath.FromSlash(rel))
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
