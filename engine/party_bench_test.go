package engine_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// BenchmarkPartySubagentRound: a subagent round of 4 personas whose model
// takes 500 ms per answer, as one whole turn (the orchestrator's call, the
// round, the woven answer). In parallel (the default) the round's wall is
// about one answer; in sequence (PartyParallelism 1) four. The target is
// under 1.5 s in parallel against 2 s or more in sequence; wall-ms is each
// turn's wall clock.
func BenchmarkPartySubagentRound(b *testing.B) {
	root := fixtures.Dir(b, fixtures.V612)
	for _, par := range []int{0, 1} {
		name := map[int]string{0: "parallel", 1: "sequential"}[par]
		b.Run(name, func(b *testing.B) {
			h := newHarness(b, harnessOpts{bmad: []string{root}, mutate: func(c *engine.Config) { c.PartyParallelism = par }})
			var orch atomic.Int32
			h.fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
				if p := personaOf(req); p != "" {
					return fakemodel.Reply{Text: p + " has a view.", Delay: 500 * time.Millisecond}
				}
				if orch.Add(1)%2 == 1 {
					return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "party_round", Arguments: `{"personas":["Mary","Winston","John","Sally"],"prompt":"go"}`}}}
				}
				return fakemodel.Reply{Text: "📊 **Mary:** Mary has a view."}
			})
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, _ := h.start(fmt.Sprintf("k%d", i), "pm")
				b.StartTimer()
				began := time.Now()
				if _, err := h.eng.Turn(context.Background(), s, "party --mode subagent", nil); err != nil {
					b.Fatal(err)
				}
				total += time.Since(began)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "wall-ms")
		})
	}
}
