package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// The sources of a project's documents join the contract table.
func init() {
	behaviours = append(behaviours,
		behaviour{"ProjectSourcesEveryChannelThatWrote", projectSources},
		behaviour{"ProjectSourcesOnlyOfVersionsStored", projectSourcesRefusedWrites},
	)
}

// written is a version written in the session of key, its source recorded
// as the engine records it.
func written(path, key string) storage.DocVersion {
	return storage.DocVersion{Path: path, Session: "s-" + key, Thread: key, Source: transcript.SourceOf(key), Person: "U1"}
}

// wantSources fails the test unless project's sources are want.
func wantSources(t *testing.T, b storage.Backend, project string, want ...string) {
	ctx := context.Background()
	t.Helper()
	got, err := b.ProjectSources(ctx, project)
	if err != nil {
		t.Fatalf("ProjectSources(%s): %v", project, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ProjectSources(%s) = %q, want %q", project, got, want)
	}
}

// projectSources: every channel of two teams that wrote any version of
// any document (an edit, a shared input, an old version) is a source,
// once, sorted; the terminal adds none; unbinding a channel keeps it.
func projectSources(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	wantSources(t, b, "shop")
	must(t, b.CreateProject(ctx, storage.Project{Name: "shop"}))
	must(t, b.BindChannel(ctx, "T1/C2", "shop"))
	wantSources(t, b, "shop")
	for _, key := range []string{"T1/C2/1.1", "T1/C2/2.2", "T2/C1/1.1", "chat/demo"} {
		if _, err := b.SaveDocument(ctx, "shop", written("prd.md", key), storage.AnyVersion, []byte(key)); err != nil {
			t.Fatal(err)
		}
	}
	wantSources(t, b, "shop", "T1/C2", "T2/C1")
	// An edit, and a file shared into the project, from other channels.
	if _, err := b.EditDocument(ctx, "shop", written("log.md", "T2/C9/3.3"), func(old []byte) ([]byte, error) {
		return append(old, "line\n"...), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SaveDocument(ctx, "shop", written(transcript.InputPrefix+"notes.txt", "T1/C0/4.4"), storage.AnyVersion, []byte("notes")); err != nil {
		t.Fatal(err)
	}
	// Newer versions from the terminal hide no earlier writer.
	if _, err := b.SaveDocument(ctx, "shop", written("log.md", "chat/pm/x"), storage.AnyVersion, []byte("over")); err != nil {
		t.Fatal(err)
	}
	wantSources(t, b, "shop", "T1/C0", "T1/C2", "T2/C1", "T2/C9")
	// A source given without a thread, and one that cannot be known (as a
	// copy of a migrated store carries it), count too.
	for _, v := range []storage.DocVersion{{Path: "a.md", Source: "T3/C1"}, {Path: "b.md", Source: storage.UnknownSource}} {
		if _, err := b.SaveDocument(ctx, "shop", v, storage.AnyVersion, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{storage.UnknownSource, "T1/C0", "T1/C2", "T2/C1", "T2/C9", "T3/C1"}
	wantSources(t, b, "shop", want...)
	// Unbinding (or moving) a channel does not make its writes anyone's.
	must(t, b.BindChannel(ctx, "T1/C2", ""))
	must(t, b.CreateProject(ctx, storage.Project{Name: "other"}))
	must(t, b.BindChannel(ctx, "T2/C1", "other"))
	wantSources(t, b, "shop", want...)
	// Another project's sources are its own.
	wantSources(t, b, "other")
	if _, err := b.SaveDocument(ctx, "other", written("prd.md", "T2/C1/5.5"), 0, []byte("y")); err != nil {
		t.Fatal(err)
	}
	wantSources(t, b, "other", "T2/C1")
	wantSources(t, b, "shop", want...)
}

// projectSourcesRefusedWrites: a save refused as stale, an edit that
// fails and a save refused for its source leave no source behind.
func projectSourcesRefusedWrites(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	if _, err := b.SaveDocument(ctx, "p", written("prd.md", "T1/C1/1.1"), 0, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.SaveDocument(ctx, "p", written("prd.md", "T1/C2/1.1"), 0, []byte("two")); !errors.Is(err, storage.ErrStale) {
		t.Fatalf("stale save = %v, want ErrStale", err)
	}
	refused := errors.New("old text not found")
	if _, err := b.EditDocument(ctx, "p", written("prd.md", "T1/C3/1.1"), func([]byte) ([]byte, error) { return nil, refused }); !errors.Is(err, refused) {
		t.Fatalf("EditDocument = %v, want the edit's error", err)
	}
	wrong := written("prd.md", "T1/C4/1.1")
	wrong.Source = "T1/C5"
	if _, err := b.SaveDocument(ctx, "p", wrong, storage.AnyVersion, []byte("x")); err == nil {
		t.Fatal("a save whose source is not its thread's channel was taken")
	}
	noSource := written("prd.md", "T1/C6/1.1")
	noSource.Source = ""
	if _, err := b.EditDocument(ctx, "p", noSource, func(old []byte) ([]byte, error) { return old, nil }); err == nil {
		t.Fatal("an edit from a Slack thread without its source was taken")
	}
	wantSources(t, b, "p", "T1/C1")
	if _, err := b.ProjectSources(ctx, ""); err == nil {
		t.Fatal("ProjectSources of no project succeeded")
	}
}
