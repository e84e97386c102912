package workspace_test

import (
	"context"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/bot/workspace"
	"agentbot/storage/credentials"
)

// BenchmarkForCached is the cost every Web API call adds with
// installations: finding its workspace's cached client (Resolve).
func BenchmarkForCached(b *testing.B) {
	s := fakeslack.New(b)
	v := vault(b)
	ctx := context.Background()
	if err := v.PutInstallation(ctx, credentials.Installation{Team: "TA", BotToken: "xoxb-bench", BotUserID: "UB"}); err != nil {
		b.Fatal(err)
	}
	cs := installed(s, v, &clock{t: time.Now()})
	cs.CacheTTL = time.Hour
	wctx := workspace.With(ctx, workspace.ID{Team: "TA"})
	if _, err := workspace.Resolve(wctx, cs); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := workspace.Resolve(wctx, cs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForStore is a call whose workspace's client is read from the
// store each time (CacheTTL passed): the cost after each minute.
func BenchmarkForStore(b *testing.B) {
	s := fakeslack.New(b)
	v := vault(b)
	ctx := context.Background()
	if err := v.PutInstallation(ctx, credentials.Installation{Team: "TA", BotToken: "xoxb-bench", BotUserID: "UB"}); err != nil {
		b.Fatal(err)
	}
	cs := installed(s, v, &clock{t: time.Now()})
	cs.Now = time.Now // CacheTTL (1 ns) passes between calls
	wctx := workspace.With(ctx, workspace.ID{Team: "TA"})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := workspace.Resolve(wctx, cs); err != nil {
			b.Fatal(err)
		}
	}
}
