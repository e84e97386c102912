package sandbox

import (
	"path/filepath"
	"testing"
)

// A copy screen applies the sandbox's policy to a host folder: the data
// folder inside it (named through a link) and everything in it, secret
// names and configured patterns are refused; the rest is shown. A folder
// that is the data folder shows nothing; one inside it shows its files,
// as a mount there would.
func TestCopyScreen(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	data := filepath.Join(root, "data")
	writeHost(t, filepath.Join(data, "agentbot.db"), "db")
	writeHost(t, filepath.Join(data, "projects/p/documents/a.md"), "a")
	writeHost(t, filepath.Join(root, "docs/domain.md"), "d")
	symlink(t, root, filepath.Join(base, "link"))
	sc, err := NewCopyScreen(root, []string{filepath.Join(base, "link", "data")}, []string{"*.private"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{".", true, true}, {"docs", true, true}, {"docs/domain.md", false, true}, {"notes.md", false, true},
		{"data", true, false}, {"data/agentbot.db", false, false}, {"data/projects/p/documents/a.md", false, false},
		{".env", false, false}, {".git", true, false}, {"docs/key.private", false, false},
	} {
		if got := sc.ShownEntry(c.rel, c.isDir); got != c.want {
			t.Errorf("ShownEntry(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
	same, err := NewCopyScreen(data, []string{data}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if same.ShownEntry(".", true) || same.ShownEntry("agentbot.db", false) {
		t.Error("the data folder itself shows files")
	}
	inside, err := NewCopyScreen(filepath.Join(data, "projects/p"), []string{data}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !inside.ShownEntry(".", true) || !inside.ShownEntry("documents/a.md", false) {
		t.Error("a folder inside the data folder hides its own files")
	}
	if _, err := NewCopyScreen(root, nil, []string{"[bad"}); err == nil {
		t.Error("a malformed pattern is accepted")
	}
}
