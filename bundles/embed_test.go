package bundles_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"agentbot/bundles"
	"agentbot/engine/fixtures"
)

// The embedded sample is the bundles folder, file for file; Extract writes
// it whole, reuses it on a second call, and the catalog loads it without a
// problem.
func TestEmbeddedSample(t *testing.T) {
	dir := t.TempDir()
	got, err := bundles.Extract(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bundles.Extract(dir)
	if err != nil || again != got {
		t.Fatalf("second extract: %s, %v; want %s", again, err, got)
	}
	src := fixtures.Bundles(t)
	n := 0
	err = filepath.WalkDir(filepath.Join(src, "product-team"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		want, _ := os.ReadFile(p)
		have, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil || !bytes.Equal(have, want) {
			t.Errorf("%s: extracted copy differs (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk: %d files, %v", n, err)
	}
	load(t, got)
}
