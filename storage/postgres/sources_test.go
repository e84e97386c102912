package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/storage"
	"agentbot/storage/pgtest"
)

// Versions an older agentbot wrote (source NULL: before migration 0006,
// or by an older replica since) count with the source their thread gives,
// else their session's key, else UnknownSource: ProjectSources reads them
// so before any backfill, and the next Open records it in the rows and
// the document heads.
func TestProjectSourcesOfOlderVersions(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := open(t, url)
	slack, err := s.NewSession(ctx, "T5/C5/9.9")
	if err != nil {
		t.Fatal(err)
	}
	terminal, err := s.NewSession(ctx, "chat/demo")
	if err != nil {
		t.Fatal(err)
	}
	// A version of today's code; then an older replica's save on top of it.
	if _, err := s.SaveDocument(ctx, "old", storage.DocVersion{Path: "prd.md", Thread: "T2/C2/1.1", Source: "T2/C2"}, 0, []byte("v1")); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, r := range []struct {
		project, path   string
		version         int
		thread, session string
	}{
		{"old", "prd.md", 2, "T1/C1/1.1", ""},                   // its thread's channel
		{"old", "brief.md", 1, "", slack.ID},                    // its session's
		{"old", "notes.md", 1, "chat/demo", slack.ID},           // the terminal's thread: none
		{"old", "term.md", 1, "", terminal.ID},                  // the terminal's session: none
		{"imported", "a.md", 1, "agentbot projects import", ""}, // unknown
		{"orphan", "a.md", 1, "", "no-such-session"},            // unknown
	} {
		if _, err := conn.Exec(ctx, `INSERT INTO projects (name, created) VALUES ($1, $2) ON CONFLICT DO NOTHING`, r.project, at); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO documents (project, path, version, size, session, thread, time, data)
			VALUES ($1, $2, $3, 1, $4, $5, $6, 'x')`, r.project, r.path, r.version, r.session, r.thread, at); err != nil {
			t.Fatal(err)
		}
		// As an older agentbot moves a head: the source column untouched.
		if _, err := conn.Exec(ctx, `INSERT INTO document_heads (project, path, version, size, session, thread, time)
			VALUES ($1, $2, $3, 1, $4, $5, $6)
			ON CONFLICT (project, path) DO UPDATE SET version = excluded.version, thread = excluded.thread, session = excluded.session`,
			r.project, r.path, r.version, r.session, r.thread, at); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		for project, want := range map[string][]string{
			"old":      {"T1/C1", "T2/C2", "T5/C5"},
			"imported": {storage.UnknownSource},
			"orphan":   {storage.UnknownSource},
		} {
			if got, err := s.ProjectSources(ctx, project); err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s: ProjectSources(%s) = %q, %v; want %q", when, project, got, err, want)
			}
		}
	}
	check("before the backfill")
	s.Close()
	s = open(t, url)
	check("after the backfill")
	var unsourced int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM documents WHERE source IS NULL`).Scan(&unsourced); err != nil || unsourced != 0 {
		t.Fatalf("%d versions without a source after Open, %v", unsourced, err)
	}
	hist, err := s.DocumentHistory(ctx, "old", "prd.md")
	if err != nil || len(hist) != 2 || hist[0].Source != "T1/C1" || hist[1].Source != "T2/C2" {
		t.Fatalf("prd.md history = %+v, %v", hist, err)
	}
	docs, err := s.Documents(ctx, "old")
	if err != nil || len(docs) != 4 {
		t.Fatalf("Documents = %+v, %v", docs, err)
	}
	heads := map[string]string{}
	for _, d := range docs {
		heads[d.Path] = d.Source
	}
	if heads["prd.md"] != "T1/C1" || heads["brief.md"] != "T5/C5" || heads["notes.md"] != "" || heads["term.md"] != "" {
		t.Fatalf("the heads' sources = %v", heads)
	}
}
