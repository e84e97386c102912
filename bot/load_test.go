package bot_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// load describes a load scenario: threads people talk in at once, each with
// turns messages, the next sent only after the previous answer arrived.
type load struct {
	threads, turns int
	// latency is the fake model's time to answer each call.
	latency time.Duration
	// maxTurns is Config.MaxConcurrentTurns.
	maxTurns int
	// http runs the bot in HTTP mode, Slack's requests sent all at once.
	http bool
}

// loadRun is what a load run measured.
type loadRun struct {
	wall time.Duration
	// acks are the ack latencies of every envelope sent during the run.
	acks []time.Duration
	// threads are the thread timestamps, by thread number.
	threads []string
}

// loadStall is how long a load run waits for the next answer before it
// counts the missing ones as lost: far longer than any answer takes,
// even on a machine short of CPU.
const loadStall = 90 * time.Second

// loadText is the n-th message (1-based) of thread i.
func loadText(i, n int) string { return fmt.Sprintf("thread %03d message %d", i, n) }

// loadRig starts a rig for l whose model answers "answer: <last user text>"
// after l.latency, in a channel whose default agent skips the picker.
func loadRig(tb testing.TB, l load) *rig {
	ctx := context.Background()
	r := newRig(tb, rigOpts{http: l.http, delivery: fakeslack.HTTPOptions{Concurrent: true},
		mutate: func(c *bot.Config) { c.MaxConcurrentTurns = l.maxTurns }})
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "answer: " + req.LastUserText(), Delay: l.latency}
	})
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
		tb.Fatal(err)
	}
	return r
}

// runLoad drives l against r: every thread starts at once with a mention,
// and sends its next message when the answer to the previous one has
// arrived (a stopped stream), as a person would.
func runLoad(tb testing.TB, r *rig, l load) loadRun {
	tb.Helper()
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		answered = map[string]int{} // thread ts → stopped streams
		failed   bool
		envs     []string
	)
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	total := 0 // answers so far
	// One watcher for all threads keeps the fake's lock quiet.
	go func() {
		defer close(watchDone)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		last, lastAt := -1, time.Now()
		for {
			select {
			case <-stopWatch:
				return
			case <-tick.C:
			}
			counts, n := map[string]int{}, 0
			for _, s := range r.slack.Streams() {
				if s.Stopped {
					counts[s.ThreadTS]++
					n++
				}
			}
			if n != last {
				last, lastAt = n, time.Now()
			}
			mu.Lock()
			answered, total = counts, n
			// Correctness, not speed: the run fails only when answers
			// stop coming while some are missing (a message lost), however
			// slow the machine (see BenchmarkLoad200Threads for time).
			if time.Since(lastAt) > loadStall {
				failed = true
			}
			cond.Broadcast()
			mu.Unlock()
		}
	}()

	run := loadRun{threads: make([]string, l.threads)}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range l.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			thread, env := r.mention(loadText(i, 1), "")
			mu.Lock()
			run.threads[i] = thread
			envs = append(envs, env)
			mu.Unlock()
			for n := 1; n <= l.turns; n++ {
				mu.Lock()
				for answered[thread] < n && !failed {
					cond.Wait()
				}
				stop := failed
				mu.Unlock()
				if stop || n == l.turns {
					return
				}
				_, env := r.reply(loadText(i, n+1), thread)
				mu.Lock()
				envs = append(envs, env)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	run.wall = time.Since(start)
	close(stopWatch)
	<-watchDone
	if failed {
		tb.Fatalf("load: no answer came for %s with %d of %d messages answered (%d threads × %d turns): messages were lost",
			loadStall, total, l.threads*l.turns, l.threads, l.turns)
	}
	for _, env := range envs {
		d, err := r.slack.WaitAck(env, 3*time.Second)
		if err != nil {
			tb.Fatalf("ack of %s: %v", env, err)
		}
		run.acks = append(run.acks, d)
	}
	return run
}

// checkAnsweredOnce checks that every message of the run was answered
// exactly once, in order per thread.
func checkAnsweredOnce(t testing.TB, r *rig, l load, run loadRun) {
	t.Helper()
	asked := map[string]int{}
	for _, req := range r.model.Requests() {
		asked[req.LastUserText()]++
	}
	for i := range l.threads {
		for n := 1; n <= l.turns; n++ {
			if c := asked[loadText(i, n)]; c != 1 {
				t.Errorf("%q was the last user message of %d model requests, want 1", loadText(i, n), c)
			}
		}
	}
	if want := l.threads * l.turns; r.model.Calls() != want {
		t.Errorf("model calls = %d, want %d", r.model.Calls(), want)
	}

	streams := map[string][]string{}
	for _, s := range r.slack.Streams() {
		streams[s.ThreadTS] = append(streams[s.ThreadTS], strings.TrimSpace(s.Text))
	}
	posts := map[string]int{}
	for _, m := range r.slack.Messages() {
		if m.Kind != fakeslack.KindStream {
			posts[m.ThreadTS]++
		}
	}
	for i, thread := range run.threads {
		var want []string
		for n := 1; n <= l.turns; n++ {
			want = append(want, "answer: "+loadText(i, n))
		}
		if got := streams[thread]; !slices.Equal(got, want) {
			t.Errorf("thread %d answers = %q, want %q", i, got, want)
		}
		if posts[thread] != 1 { // the greeting; anything else is an error or a duplicate
			t.Errorf("thread %d has %d posted messages besides its streams, want 1 (the greeting)", i, posts[thread])
		}
	}
}

// Under load (many threads at once, each a short conversation), every
// message is answered exactly once and in order, and the bot leaves no
// goroutine behind when it stops. It checks correctness only, so it
// passes on a machine short of CPU (a 0.3-CPU quota, a second go test
// running): how long the run takes is BenchmarkLoad200Threads's.
func TestLoadEveryMessageAnsweredOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	l := load{threads: 200, turns: 3, latency: 50 * time.Millisecond, maxTurns: 32}
	baseline := runtime.NumGoroutine()
	r := loadRig(t, l)
	run := runLoad(t, r, l)
	checkAnsweredOnce(t, r, l, run)
	t.Logf("%d threads × %d turns in %v", l.threads, l.turns, run.wall.Round(time.Millisecond))

	r.shutdown()
	r.slack.Close()
	r.model.Close()
	deadline := time.Now().Add(5 * time.Second)
	const margin = 3
	for {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		n := runtime.NumGoroutine()
		if n <= baseline+margin {
			break
		}
		if time.Now().After(deadline) {
			var buf bytes.Buffer
			pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("goroutines: %d after shutdown, %d before the bot started\n%s", n, baseline, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkLoad200Threads is the load scenario: 200 threads at
// once, 3 turns each, a model that takes 500 ms per call, and at most 50
// turns at a time (AGENTBOT_MAX_CONCURRENT_TURNS=50). It reports the wall
// time against the ideal (all model time spread over the turn slots),
// their ratio (target ≤ 1.5), the p99 ack latency (target < 50 ms) and
// the process's peak RSS.
//
// It runs over Socket Mode and over HTTP side by side: sub-benchmarks
// socket and http (the Events API, every request signed and verified).
func BenchmarkLoad200Threads(b *testing.B) {
	for _, mode := range []string{"socket", "http"} {
		b.Run(mode, func(b *testing.B) {
			benchLoad(b, load{threads: 200, turns: 3, latency: 500 * time.Millisecond, maxTurns: 50, http: mode == "http"})
		})
	}
}

func benchLoad(b *testing.B, l load) {
	ideal := time.Duration(float64(l.threads*l.turns) * float64(l.latency) / float64(l.maxTurns))
	var wall time.Duration
	var acks []time.Duration
	for range b.N {
		b.StopTimer()
		r := loadRig(b, l)
		b.StartTimer()
		run := runLoad(b, r, l)
		b.StopTimer()
		checkAnsweredOnce(b, r, l, run)
		r.shutdown()
		wall += run.wall
		acks = append(acks, run.acks...)
		b.StartTimer()
	}
	wall /= time.Duration(b.N)
	b.ReportMetric(float64(l.maxTurns), "max-turns")
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(ideal.Seconds(), "ideal-s")
	b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
	b.ReportMetric(ms(percentile(acks, 0.50)), "ack-p50-ms")
	b.ReportMetric(ms(percentile(acks, 0.99)), "ack-p99-ms")
	b.ReportMetric(ms(slices.Max(acks)), "ack-max-ms")
	if mb, ok := peakRSSMB(); ok {
		b.ReportMetric(mb, "peak-rss-MB")
	}
}

// BenchmarkAckLatency measures how long an envelope waits for its ack when
// the bot is idle: the floor under the ack latency of the load benchmark,
// over Socket Mode and over HTTP (the request's answer).
func BenchmarkAckLatency(b *testing.B) {
	for _, mode := range []string{"socket", "http"} {
		b.Run(mode, func(b *testing.B) { benchAck(b, mode == "http") })
	}
}

func benchAck(b *testing.B, http bool) {
	r := newRig(b, rigOpts{http: http})
	acks := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		// A message the bot ignores (its own), so only the ack is measured.
		env := r.slack.SendEvent(map[string]any{"type": "message", "user": r.slack.BotUserID(), "channel": channel,
			"channel_type": "channel", "text": "echo", "ts": r.slack.NextTS()})
		d, err := r.slack.WaitAck(env, 3*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		acks = append(acks, d)
	}
	b.StopTimer()
	b.ReportMetric(ms(percentile(acks, 0.50)), "ack-p50-ms")
	b.ReportMetric(ms(percentile(acks, 0.99)), "ack-p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// percentile returns the p-quantile (0..1) of ds by the nearest-rank method.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// peakRSSMB reads the process's peak resident set size (VmHWM) in MB.
func peakRSSMB() (float64, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024, err == nil
		}
	}
	return 0, false
}

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	if p := percentile(ds, 0.99); p != 99*time.Millisecond {
		t.Errorf("p99 of 1..100 ms = %v", p)
	}
	if p := percentile(ds, 0.5); p != 50*time.Millisecond {
		t.Errorf("p50 of 1..100 ms = %v", p)
	}
	if p := percentile(nil, 0.99); p != 0 {
		t.Errorf("p99 of nothing = %v", p)
	}
}
