package project

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"agentbot/engine/catalog"
	"agentbot/engine/fixtures"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
	"agentbot/storage/storetest"
)

// benchProjectList measures list_files on a project of 1,000 documents as
// a turn meets it: the working copy brought up to date with the store
// (one listing, nothing changed), the sandbox opened on it, and the glob
// of every document.
func benchProjectList(b *testing.B, st storage.Backend) {
	const n = 1000
	storetest.SeedDocuments(b, st, "big", n)
	pf := &Folder{name: "big", root: b.TempDir()}
	if err := pf.Sync(context.Background(), st, nil); err != nil { // the first fetch
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if err := pf.Sync(context.Background(), st, nil); err != nil {
			b.Fatal(err)
		}
		sb, err := sandbox.Open(sandbox.Config{OutputRoot: pf.Docs(), InputRoot: pf.Inputs()})
		if err != nil {
			b.Fatal(err)
		}
		// The glob walks all 1,000 documents; list_files answers with the
		// first 500 and a note (sandbox.ErrGlobTruncated).
		files, err := sb.Glob("/outputs/**")
		sb.Close()
		if (err != nil && !errors.Is(err, sandbox.ErrGlobTruncated)) || len(files) < 500 {
			b.Fatalf("%d files listed, %v", len(files), err)
		}
	}
}

// BenchmarkProjectListFiles1000Bolt is list_files on 1,000 documents with
// the bbolt store.
func BenchmarkProjectListFiles1000Bolt(b *testing.B) {
	st, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchProjectList(b, st)
}

// BenchmarkProjectListFiles1000Postgres is the same on PostgreSQL.
func BenchmarkProjectListFiles1000Postgres(b *testing.B) {
	st, err := postgres.Open(context.Background(), pgtest.URL(b), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	benchProjectList(b, st)
}

// BenchmarkProjectState200 is the bytes a project of 200 documents adds
// to a skill's load (bmad-help's first request), with the 6.12 help
// tables' outputs matched; the target is under 8 KB.
func BenchmarkProjectState200(b *testing.B) {
	helps := catalog.HelpOutputs(fixtures.Dir(b, fixtures.V612))
	if len(helps) == 0 {
		b.Fatal("no help rows with outputs in the 6.12 fixture")
	}
	v := vars.Vars{"output_folder": "/outputs", "planning_artifacts": "/outputs/planning-artifacts", "implementation_artifacts": "/outputs/implementation-artifacts"}
	var docs []transcript.DocVersion
	at := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for i := range 200 {
		p := fmt.Sprintf("implementation-artifacts/stories/story-%03d.md", i)
		switch i {
		case 0, 1, 2:
			p = []string{"planning-artifacts/product-brief.md", "planning-artifacts/prd.md", "planning-artifacts/architecture.md"}[i]
		}
		docs = append(docs, transcript.DocVersion{Path: p, Version: 1 + i%3, Person: "U0123ABCDE", Agent: "dev", Time: at.Add(time.Duration(i) * time.Minute)})
	}
	var out string
	for b.Loop() {
		out = describeProject("channel/T0123/C0456", docs, helps, v, transcript.DocVersion.Author)
	}
	quoted, _ := json.Marshal(out)
	if len(quoted) > 8<<10 || !strings.Contains(out, "prd output of bmad-prd") {
		b.Fatalf("%d bytes:\n%s", len(quoted), out)
	}
	b.ReportMetric(float64(len(quoted)), "bytes")
}
