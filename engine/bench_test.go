package engine_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/llm"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
)

// timedModel measures the time spent in the model client, so the engine's
// own time can be told apart.
type timedModel struct {
	m     engine.Model
	spent time.Duration
}

func (t *timedModel) Complete(ctx context.Context, req llm.Request, on func(string)) (*llm.Response, error) {
	start := time.Now()
	r, err := t.m.Complete(ctx, req, on)
	t.spent += time.Since(start)
	return r, err
}

// benchSession is an active session with a 100-message transcript.
func benchSession(b *testing.B, eng *engine.Engine) *engine.Session {
	cat := catalog.Load(catalog.Options{Bundles: []string{fixtures.Bundles(b)}})
	a, _ := cat.Find("product-lead")
	s := &engine.Session{Session: transcript.Session{ID: "bench", Key: "bench"}}
	if _, err := eng.Activate(context.Background(), s, a); err != nil {
		b.Fatal(err)
	}
	for len(s.Messages) < 100 {
		s.Messages = append(s.Messages,
			transcript.Message{Role: transcript.RoleUser, Content: strings.Repeat("The checkout flow needs a reorder button. ", 5)},
			transcript.Message{Role: transcript.RoleAssistant, Content: strings.Repeat("Noted; who uses it most often? ", 5)})
	}
	s.Messages = s.Messages[:100]
	return s
}

// BenchmarkTurnOverhead runs one iteration (one model call, no tools)
// against an in-process fake model with a 100-message transcript, and
// reports the engine's own time (excluding the model call) per turn and its
// p99. Compare engine-ns/op with BenchmarkBareCall's ns/op.
func BenchmarkTurnOverhead(b *testing.B) {
	fm := fakemodel.New()
	defer fm.Close()
	fm.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "Who uses it most?", Chunks: 1} })
	tm := &timedModel{m: model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m"})}
	out := b.TempDir()
	eng := engine.New(engine.Config{Model: tm, OutputRoot: func(string) string { return out }})
	s := benchSession(b, eng)
	base := append([]transcript.Message(nil), s.Messages...)
	ctx := context.Background()
	overheads := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		s.Messages = base[:len(base):len(base)]
		tm.spent = 0
		start := time.Now()
		if _, err := eng.Turn(ctx, s, "The ops team, daily.", nil); err != nil {
			b.Fatal(err)
		}
		d := time.Since(start)
		total += d
		overheads = append(overheads, d-tm.spent)
	}
	b.StopTimer()
	sort.Slice(overheads, func(i, j int) bool { return overheads[i] < overheads[j] })
	var sum time.Duration
	for _, o := range overheads {
		sum += o
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(b.N), "engine-ns/op")
	b.ReportMetric(float64(overheads[(len(overheads)*99)/100].Nanoseconds()), "engine-p99-ns")
	b.ReportMetric(float64((total-sum).Nanoseconds())/float64(b.N), "model-ns/op")
}

// BenchmarkBareCall is the baseline: the same request (100 messages plus
// the tools) sent with the model client alone to the same fake.
func BenchmarkBareCall(b *testing.B) {
	fm := fakemodel.New()
	defer fm.Close()
	fm.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "Who uses it most?", Chunks: 1} })
	out := b.TempDir()
	eng := engine.New(engine.Config{Model: &timedModel{}, OutputRoot: func(string) string { return out }})
	s := benchSession(b, eng)
	msgs := append(append([]transcript.Message(nil), s.Messages...), transcript.Message{Role: "user", Content: "The ops team, daily."})
	tools := engine.ToolDefinitions()
	client := model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m"})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := client.Complete(ctx, llm.Request{Messages: msgs, Tools: tools}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if resp.Message.Content == "" {
			b.Fatal(fmt.Errorf("empty reply"))
		}
	}
}
