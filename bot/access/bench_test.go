package access

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/bot/render"
)

// BenchmarkMaySeeCached is one See question answered from the cache (a
// Home tab of ten sessions asks ten), reporting the Slack calls made per
// question: after the first, none.
func BenchmarkMaySeeCached(b *testing.B) {
	fs := fakeslack.New(b)
	fs.SetMembers(priv, alice)
	s := NewSlack(render.Slack{API: fs.Client(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, 0)
	ctx := context.Background()
	thing := Thing{Channel: ch(priv)}
	if !May(ctx, s, cfg, alice, See, thing).OK {
		b.Fatal("a member can't see")
	}
	calls := len(fs.Calls())
	b.ResetTimer()
	for b.Loop() {
		if !May(ctx, s, cfg, alice, See, thing).OK {
			b.Fatal("refused")
		}
	}
	b.ReportMetric(float64(len(fs.Calls())-calls)/float64(b.N), "slack-calls/op")
}

// BenchmarkMaySeeUncached is the same question when Slack must be asked
// each time (the cache forgotten before each), through the real client
// against the fake over HTTP.
func BenchmarkMaySeeUncached(b *testing.B) {
	fs := fakeslack.New(b)
	fs.SetMembers(priv, alice)
	s := NewSlack(render.Slack{API: fs.Client(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, 0)
	ctx := context.Background()
	thing := Thing{Channel: ch(priv)}
	for b.Loop() {
		s.Forget(thing.Channel)
		if !May(ctx, s, cfg, alice, See, thing).OK {
			b.Fatal("refused")
		}
	}
}
