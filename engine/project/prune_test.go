package project

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/storage/bolt"
)

// A working copy an older agentbot filled from a base layer holding the
// data folder (it screened names only) loses those copies at the next
// sync: the base layer's other files and the project's own versions stay.
func TestSyncPrunesHiddenBaseCopies(t *testing.T) {
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "_bmad-output")
	data := filepath.Join(out, "agentbot-data")
	for name, body := range map[string]string{
		"planning-artifacts/brief.md":                 "the brief",
		"agentbot-data/agentbot.db":                   "db",
		"agentbot-data/projects/dm/inputs/salary.csv": "salary",
	} {
		p := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.SaveDocument(ctx, "p", transcript.DocVersion{Path: "agentbot-data/notes.md", Session: "s1"}, 0, []byte("a document of the project")); err != nil {
		t.Fatal(err)
	}
	layer := func(hidden ...string) []BaseLayer {
		sc, err := sandbox.NewCopyScreen(out, hidden, nil)
		if err != nil {
			t.Fatal(err)
		}
		return []BaseLayer{{dir: out, screen: sc}}
	}
	pf := &Folder{name: "p", root: t.TempDir()}
	if err := pf.Sync(context.Background(), st, layer()); err != nil { // as an older agentbot did
		t.Fatal(err)
	}
	copied := filepath.Join(pf.Docs(), "agentbot-data", "agentbot.db")
	if _, err := os.Stat(copied); err != nil {
		t.Fatalf("the unscreened layer did not copy the data folder (the test sets it up wrong): %v", err)
	}
	pf = &Folder{name: "p", root: pf.root} // a restart
	if err := pf.Sync(context.Background(), st, layer(data)); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{copied, filepath.Join(pf.Docs(), "agentbot-data", "projects")} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s is still in the working copy: %v", gone, err)
		}
	}
	for name, want := range map[string]string{"planning-artifacts/brief.md": "the brief", "agentbot-data/notes.md": "a document of the project"} {
		if b, err := os.ReadFile(filepath.Join(pf.Docs(), filepath.FromSlash(name))); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	pf = &Folder{name: "p", root: pf.root}
	pf.load()
	for doc := range pf.versions {
		if doc == "agentbot-data/agentbot.db" || doc == "agentbot-data/projects/dm/inputs/salary.csv" {
			t.Errorf("versions.json still records %s", doc)
		}
	}
}
