package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/storage"
)

// BenchDocumentContention measures a save under contention: each
// iteration, threads goroutines append one line each to the same
// document at once (EditDocument). It reports the p50 and p99 latency of
// one append and fails if any line is lost.
func BenchDocumentContention(b *testing.B, be storage.Backend, threads int) {
	ctx := context.Background()
	const project, doc = "bench", "planning-artifacts/prd.md"
	var mu sync.Mutex
	var lat []time.Duration
	lines := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var wg sync.WaitGroup
		for g := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				_, err := be.EditDocument(ctx, project, storage.DocVersion{Path: doc, Person: fmt.Sprint("U", g)}, func(old []byte) ([]byte, error) {
					return append(old, fmt.Sprintf("round %d thread %d\n", i, g)...), nil
				})
				d := time.Since(start)
				if err != nil {
					b.Error(err)
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
		lines += threads
	}
	b.StopTimer()
	data, err := be.DocumentData(ctx, project, doc, 0)
	if err != nil {
		b.Fatal(err)
	}
	if got := strings.Count(string(data), "\n"); got != lines {
		b.Fatalf("%d lines in the document after %d appends: writes were lost", got, lines)
	}
	reportLatency(b, lat, "")
}

// SeedDocuments saves n small documents in project, spread over folders
// as a BMAD project's are, for benchmarks of a large project.
func SeedDocuments(tb testing.TB, be storage.Backend, project string, n int) {
	ctx := context.Background()
	tb.Helper()
	for i := range n {
		p := fmt.Sprintf("implementation-artifacts/stories/story-%04d.md", i)
		if i%10 == 0 {
			p = fmt.Sprintf("planning-artifacts/doc-%04d.md", i)
		}
		if _, err := be.SaveDocument(ctx, project, storage.DocVersion{Path: p, Person: "U1", Agent: "dev"}, 0, []byte("# "+p+"\n")); err != nil {
			tb.Fatal(err)
		}
	}
}
