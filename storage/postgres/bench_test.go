package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/engine/transcript"
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

// BenchmarkAdmitParallel is the ack latency of Admit with 200
// goroutines admitting at once on two cores.
func BenchmarkAdmitParallel(b *testing.B) {
	storetest.BenchAdmitParallel(b, openBench(b), 100)
}

// BenchmarkFencedWrite is the fencing check's cost per store write: the
// same transcript save unfenced (SaveSession) and fenced
// (SaveSessionFenced), and the posted marker with the dequeue
// (CompleteFenced, one transaction; there is no unfenced dequeue).
func BenchmarkFencedWrite(b *testing.B) {
	ctx := context.Background()
	s := openBench(b)
	for _, fence := range []bool{false, true} {
		name := map[bool]string{false: "unfenced", true: "fenced"}[fence]
		key := "T/C/" + name
		sess, err := s.NewSession(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		f, _, err := s.TakeLease(ctx, key, "bench", time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("save/"+name, func(b *testing.B) {
			for b.Loop() {
				sess.Messages = append(sess.Messages, transcript.Message{Role: transcript.RoleUser, Content: "hello"})
				save := s.SaveSession
				if fence {
					save = func(ctx context.Context, x *transcript.Session) error { return s.SaveSessionFenced(ctx, f, x) }
				}
				if err := save(ctx, sess); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("complete/"+name, func(b *testing.B) {
			if !fence {
				b.Skip("items leave the queue under a fence only")
			}
			for b.Loop() {
				b.StopTimer()
				seq, err := storetest.Enqueue(ctx, s, key, []byte(`{}`))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := s.CompleteFenced(ctx, f, seq, map[string]string{"bot.posted": "1"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
