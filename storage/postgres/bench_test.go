package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
	"agentbot/storage/storetest"
)

// roundTrips counts the store's round trips: each query and each batch
// (a batch is sent as one pipeline).
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

func openBench(b *testing.B, opts ...postgres.Option) *postgres.Store {
	s, err := postgres.Open(context.Background(), pgtest.URL(b), b.TempDir(), opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkInboundMessage is the store's cost of one inbound message
// (see storetest.BenchInbound), with round trips counted by a tracer.
func BenchmarkInboundMessage(b *testing.B) {
	rt := &roundTrips{}
	s := openBench(b, postgres.WithTracer(rt))
	storetest.BenchInbound(b, s, rt.n.Load)
}

// BenchmarkAdmitParallel is the ack latency of AdmitAsync with 200
// goroutines admitting at once on two cores.
func BenchmarkAdmitParallel(b *testing.B) {
	storetest.BenchAdmitParallel(b, openBench(b), 100)
}
