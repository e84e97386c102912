package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/storage"
)

// The Projects role's behaviours join the contract table.
func init() {
	behaviours = append(behaviours,
		behaviour{"ProjectsCreateBindAndList", projectsCreateBind},
		behaviour{"DocumentVersionsNewestFirstWithAuthors", documentVersions},
		behaviour{"StaleSaveRefusedNamingWhoChangedIt", staleSaveRefused},
		behaviour{"ConcurrentAppendsAllLand", concurrentAppends},
		behaviour{"EditErrorStoresNothing", editErrorStoresNothing},
		behaviour{"ProjectsDoNotShareDocuments", projectsIsolated},
	)
}

func projectsCreateBind(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	if err := b.CreateProject(ctx, storage.Project{Name: "checkout"}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateProject(ctx, storage.Project{Name: "checkout"}); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("second CreateProject = %v, want ErrExists", err)
	}
	if _, err := storage.FindProject(ctx, b, "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Project(missing) = %v, want ErrNotFound", err)
	}
	if err := b.BindChannel(ctx, "T1/C9", "nope"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("BindChannel to a missing project = %v, want ErrNotFound", err)
	}
	for _, ch := range []string{"T1/C2", "T1/C1"} {
		if err := b.BindChannel(ctx, ch, "checkout"); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := b.ChannelBinding(ctx, "T1/C1"); err != nil || got != "checkout" {
		t.Fatalf("ChannelBinding = %q, %v", got, err)
	}
	if got, err := b.BoundChannels(ctx, "checkout"); err != nil || strings.Join(got, ",") != "T1/C1,T1/C2" {
		t.Fatalf("BoundChannels = %v, %v", got, err)
	}
	if err := b.BindChannel(ctx, "T1/C2", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := b.ChannelBinding(ctx, "T1/C2"); err != nil || got != "" {
		t.Fatalf("ChannelBinding after unbind = %q, %v", got, err)
	}
	implicitProject(t, b)
}

// implicitProject: a document written to a project nobody created
// creates it, and ListProjects lists it by name.
func implicitProject(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	// A document written to a project nobody created creates it.
	if _, err := b.SaveDocument(ctx, storage.ChannelProject("T1", "C3"), storage.DocVersion{Path: "a.md"}, 0, []byte("a")); err != nil {
		t.Fatal(err)
	}
	list, err := b.ListProjects(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "channel/T1/C3" || list[1].Name != "checkout" || list[1].Created.IsZero() {
		t.Fatalf("ListProjects = %+v, %v", list, err)
	}
}

func documentVersions(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	clock := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	save := func(path, person, data string) storage.DocVersion {
		t.Helper()
		clock = clock.Add(time.Minute)
		v, err := b.SaveDocument(ctx, "p", storage.DocVersion{Path: path, Person: person, Agent: "pm", Thread: "T1/C1/1.1", Source: "T1/C1", Session: "s1", Time: clock}, storage.AnyVersion, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	save("brief.md", "U1", "brief one")
	save("prd.md", "U2", "prd one")
	if v := save("brief.md", "U3", "brief two!"); v.Version != 2 || v.Size != 10 {
		t.Fatalf("second save = %+v, want version 2 of 10 bytes", v)
	}
	docs, err := b.Documents(ctx, "p")
	if err != nil || len(docs) != 2 {
		t.Fatalf("Documents = %+v, %v", docs, err)
	}
	if d := docs[0]; d.Path != "brief.md" || d.Version != 2 || d.Person != "U3" || d.Agent != "pm" || d.Thread != "T1/C1/1.1" || d.Source != "T1/C1" || !d.Time.Equal(clock) {
		t.Fatalf("newest document = %+v", d)
	}
	if docs[1].Path != "prd.md" || docs[1].Version != 1 {
		t.Fatalf("older document = %+v", docs[1])
	}
	versionsAndData(t, b)
}

// versionsAndData: a document's history is newest first with its authors,
// and each version's bytes are kept.
func versionsAndData(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	hist, err := b.DocumentHistory(ctx, "p", "brief.md")
	if err != nil || len(hist) != 2 || hist[0].Version != 2 || hist[1].Version != 1 || hist[1].Person != "U1" || hist[1].Source != "T1/C1" {
		t.Fatalf("DocumentHistory = %+v, %v", hist, err)
	}
	for version, want := range map[int]string{0: "brief two!", 1: "brief one", 2: "brief two!"} {
		if got, err := b.DocumentData(ctx, "p", "brief.md", version); err != nil || string(got) != want {
			t.Fatalf("DocumentData v%d = %q, %v", version, got, err)
		}
	}
	if _, err := b.DocumentData(ctx, "p", "brief.md", 3); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("DocumentData of a missing version = %v, want ErrNotFound", err)
	}
}

func staleSaveRefused(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	if _, err := b.SaveDocument(ctx, "p", storage.DocVersion{Path: "prd.md", Person: "U1", Agent: "pm", Thread: "T1/C1/1.1", Source: "T1/C1", Time: at}, 0, []byte("one")); err != nil {
		t.Fatal(err)
	}
	// A second writer that has seen no version must not overwrite it.
	_, err := b.SaveDocument(ctx, "p", storage.DocVersion{Path: "prd.md", Person: "U2", Thread: "T1/C2/2.2", Source: "T1/C2"}, 0, []byte("two"))
	var stale *storage.StaleError
	if !errors.As(err, &stale) || !errors.Is(err, storage.ErrStale) {
		t.Fatalf("stale save = %v, want a StaleError", err)
	}
	msg := err.Error()
	for _, want := range []string{"version 1", "U1", "pm", "T1/C1/1.1", "2026-03-01 09:30", "read it first"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("refusal %q does not say %q", msg, want)
		}
	}
	if got, _ := b.DocumentData(ctx, "p", "prd.md", 0); string(got) != "one" {
		t.Fatalf("after the refusal the document is %q", got)
	}
	// Having read version 1, the retry lands as version 2.
	v, err := b.SaveDocument(ctx, "p", storage.DocVersion{Path: "prd.md", Person: "U2"}, stale.Latest.Version, []byte("two"))
	if err != nil || v.Version != 2 {
		t.Fatalf("retry = %+v, %v", v, err)
	}
}

func concurrentAppends(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.EditDocument(ctx, "p", storage.DocVersion{Path: "log.md", Person: fmt.Sprint("U", i)}, func(old []byte) ([]byte, error) {
				return append(old, fmt.Sprintf("line %d\n", i)...), nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.DocumentData(ctx, "p", "log.md", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if !strings.Contains(string(got), fmt.Sprintf("line %d\n", i)) {
			t.Fatalf("append %d was lost:\n%s", i, got)
		}
	}
	if hist, _ := b.DocumentHistory(ctx, "p", "log.md"); len(hist) != n {
		t.Fatalf("%d versions, want %d", len(hist), n)
	}
}

func editErrorStoresNothing(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	refused := errors.New("old text not found")
	_, err := b.EditDocument(ctx, "p", storage.DocVersion{Path: "x.md"}, func([]byte) ([]byte, error) { return nil, refused })
	if !errors.Is(err, refused) {
		t.Fatalf("EditDocument = %v, want the edit's error", err)
	}
	if docs, err := b.Documents(ctx, "p"); err != nil || len(docs) != 0 {
		t.Fatalf("Documents after a refused edit = %+v, %v", docs, err)
	}
	if _, err := b.SaveDocument(ctx, "p", storage.DocVersion{Path: "x.md"}, 0, []byte("new")); err != nil {
		t.Fatalf("a first save after a refused edit: %v", err)
	}
}

func projectsIsolated(t *testing.T, b storage.Backend) {
	ctx := context.Background()
	if _, err := b.SaveDocument(ctx, "a", storage.DocVersion{Path: "secret.md"}, 0, []byte("a's")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DocumentData(ctx, "b", "secret.md", 0); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("another project's document = %v, want ErrNotFound", err)
	}
	if docs, err := b.Documents(ctx, "b"); err != nil || len(docs) != 0 {
		t.Fatalf("Documents of another project = %+v, %v", docs, err)
	}
	if _, err := b.SaveDocument(ctx, "b", storage.DocVersion{Path: "secret.md"}, 0, []byte("b's")); err != nil {
		t.Fatalf("the same path in another project is a new document: %v", err)
	}
}
