package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// BenchInbound measures the store's cost of one inbound message: Admit
// (dedupe and enqueue), Next, CompleteFenced (under the thread's lease,
// taken once) and one SaveSession appending the
// user's message and the answer. It reports p50-ms and p99-ms per
// message and, when roundTrips (a counter of the backend's round trips)
// is given, roundtrips/msg.
func BenchInbound(b *testing.B, be storage.Backend, roundTrips func() int64) {
	ctx := context.Background()
	const key = "T1/C1/1700000000.000100"
	sess, err := be.NewSession(ctx, key)
	if err != nil {
		b.Fatal(err)
	}
	sess.Messages = []transcript.Message{{Role: transcript.RoleSystem, Content: "You are a product manager."}}
	if err := be.SaveSession(ctx, sess); err != nil {
		b.Fatal(err)
	}
	f, ok, err := be.TakeLease(ctx, key, "bench", time.Hour)
	if err != nil || !ok {
		b.Fatalf("lease: %v %v", ok, err)
	}
	payload := []byte(`{"user":"U1","text":"Please draft the next section of the PRD.","ts":"1700000000.000200"}`)
	lat := make([]time.Duration, 0, b.N)
	var rt0 int64
	if roundTrips != nil {
		rt0 = roundTrips()
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		dup, _, err := Admit(ctx, be, []string{fmt.Sprintf("Ev%09d", i), fmt.Sprintf("C1/%d", i)}, 10*time.Minute, key, payload)
		if err != nil || dup {
			b.Fatalf("admit: dup %v, %v", dup, err)
		}
		seq, _, ok, err := storage.Next(ctx, be, key)
		if err != nil || !ok {
			b.Fatalf("next: %v %v", ok, err)
		}
		if err := be.CompleteFenced(ctx, f, seq, nil); err != nil {
			b.Fatal(err)
		}
		sess.Messages = append(sess.Messages,
			transcript.Message{Role: transcript.RoleUser, Content: "Please draft the next section of the PRD."},
			transcript.Message{Role: transcript.RoleAssistant, Content: "Here is the next section: goals, users and scope."})
		sess.Usage.Calls++
		if err := be.SaveSession(ctx, sess); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatency(b, lat, "")
	if roundTrips != nil && len(lat) > 0 {
		b.ReportMetric(float64(roundTrips()-rt0)/float64(len(lat)), "roundtrips/msg")
	}
}

// BenchAdmitParallel measures the ack latency of inbound messages under
// load: many goroutines (parallelism × GOMAXPROCS, 100 per core) each
// admit events, timed to the point the bot acks: the fsynced journal
// write for a journaled backend (Admit returns a journaled channel), the commit for the
// others. It reports ack-p50-ms and ack-p99-ms.
func BenchAdmitParallel(b *testing.B, be storage.Backend, parallelism int) {
	ctx := context.Background()
	var (
		mu  sync.Mutex
		lat []time.Duration
		n   int64
	)
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			mu.Lock()
			n++
			i := n
			mu.Unlock()
			start := time.Now()
			keys, key := []string{fmt.Sprintf("Ev%09d", i)}, fmt.Sprintf("T1/C1/%d", i%50)
			jc, ch := be.Admit(ctx, 0, keys, 10*time.Minute, key, []byte(`{"text":"hi"}`))
			if jc != nil {
				if err := <-jc; err != nil {
					b.Errorf("journal: %v", err)
					return
				}
				mine = append(mine, time.Since(start)) // the bot acks now
			}
			if a := <-ch; a.Err != nil || a.Dup {
				b.Errorf("admit: %+v", a)
				return
			}
			if jc == nil {
				mine = append(mine, time.Since(start)) // the bot acks once committed
			}
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	reportLatency(b, lat, "ack-")
}

// reportLatency reports the p50 and p99 of lat in milliseconds.
func reportLatency(b *testing.B, lat []time.Duration, prefix string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(0.50), prefix+"p50-ms")
	b.ReportMetric(pct(0.99), prefix+"p99-ms")
}
