package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/pgtest"
)

// The Chaos tests play the faults of issue 18 against real `agentbot
// serve` processes (two replicas on PostgreSQL, or one on bbolt), with the
// fake Slack and the fake model, while threads of several messages each
// are being answered; Slack's redelivery of unacked events is played
// (sooner than Slack's 1 and 5 minutes). Each test counts, per message:
// answered exactly once, lost, answered twice, answered out of order; the
// streams left open; and the Slack writes a replica made in a thread
// while the lease table (polled during the run) said another replica held
// it. Every count but "exactly once" must be 0.

// chaosWrites are the Slack Web API methods that change what a thread
// shows.
var chaosWrites = map[string]bool{"chat.postMessage": true, "chat.update": true, "chat.delete": true,
	"chat.startStream": true, "chat.appendStream": true, "chat.stopStream": true}

// tappedCall is one Web API call a replica made.
type tappedCall struct {
	replica, method string
	form            url.Values
	start, end      time.Time
}

// slackTap is a replica's own way to the fake Slack's Web API: it records
// every call, so the test can tell which replica wrote to a thread.
type slackTap struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []tappedCall
	// hold, when set, picks the calls the tap never forwards: they wait
	// until the replica is gone (held counts them).
	hold func(method string, form url.Values) bool
	held int
}

func newSlackTap(t testing.TB, fake *fakeslack.Server, replica string, into *[]*slackTap) *slackTap {
	tap := &slackTap{}
	tap.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c := tappedCall{replica: replica, method: strings.TrimPrefix(r.URL.Path, "/api/"), start: time.Now()}
		c.form, _ = url.ParseQuery(string(body))
		tap.mu.Lock()
		hold := tap.hold != nil && tap.hold(c.method, c.form)
		if hold {
			tap.held++
		}
		tap.mu.Unlock()
		if hold {
			<-r.Context().Done() // the replica went away
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, fake.URL()+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		c.end = time.Now()
		tap.mu.Lock()
		tap.calls = append(tap.calls, c)
		tap.mu.Unlock()
	}))
	t.Cleanup(tap.srv.Close)
	*into = append(*into, tap)
	return tap
}

func (tap *slackTap) url() string { return tap.srv.URL + "/api/" }

func (tap *slackTap) all() []tappedCall {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	return slices.Clone(tap.calls)
}

// leaseSample is the live leases at one moment: thread key → holder.
type leaseSample struct {
	at      time.Time
	holders map[string]string
}

// leasePoll samples the lease table every 20 ms until stopped.
type leasePoll struct {
	mu      sync.Mutex
	samples []leaseSample
	stop    chan struct{}
	done    chan struct{}
}

func pollLeases(t testing.TB, dbURL string) *leasePoll {
	p := &leasePoll{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		var conn *pgx.Conn
		for {
			select {
			case <-p.stop:
				if conn != nil {
					conn.Close(context.Background())
				}
				return
			case <-time.After(20 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if conn == nil || conn.IsClosed() {
				conn, _ = pgx.Connect(ctx, dbURL)
			}
			if conn == nil {
				cancel()
				continue
			}
			s := leaseSample{holders: map[string]string{}}
			rows, err := conn.Query(ctx, `SELECT key, holder, clock_timestamp() FROM leases WHERE expires > clock_timestamp()`)
			if err == nil {
				for rows.Next() {
					var k, h string
					var at time.Time
					if rows.Scan(&k, &h, &at) == nil {
						s.holders[k] = h
					}
				}
				rows.Close()
				s.at = time.Now()
				p.mu.Lock()
				p.samples = append(p.samples, s)
				p.mu.Unlock()
			} else {
				conn.Close(ctx)
				conn = nil
			}
			cancel()
		}
	}()
	t.Cleanup(func() { p.end() })
	return p
}

func (p *leasePoll) end() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// holds reports whether holder held a live lease in the latest sample.
func (p *leasePoll) holds(holder string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.samples) == 0 {
		return false
	}
	for _, h := range p.samples[len(p.samples)-1].holders {
		if h == holder {
			return true
		}
	}
	return false
}

// holderAround is the holder of key in the samples just before and just
// after t ("" when none was live or there is no sample).
func (p *leasePoll) holderAround(key string, t time.Time) (before, after string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, _ := slices.BinarySearchFunc(p.samples, t, func(s leaseSample, t time.Time) int { return s.at.Compare(t) })
	if i > 0 {
		before = p.samples[i-1].holders[key]
	}
	if i < len(p.samples) {
		after = p.samples[i].holders[key]
	}
	return before, after
}

// chaosMsg is one message the test sent, with every envelope that carried
// it (Slack's redeliveries).
type chaosMsg struct {
	thread, text string
	envs         []string
}

// chaos is one run: the replicas, their taps, the messages, and the
// lease poll.
type chaos struct {
	t      testing.TB
	e      *replicaEnv
	taps   []*slackTap
	procs  map[string]*replicaProc
	live   func() []int // the websockets Slack may redeliver on
	roots  []string
	msgs   [][]*chaosMsg
	leases *leasePoll
	mu     sync.Mutex
	stopRD chan struct{}
	rdDone chan struct{}
}

// chaosModel answers "ANSWER[<first line>]" after a pause, streamed in
// chunks, so turns overlap the faults and streams stay open a while.
func chaosModel(e *replicaEnv, pause time.Duration) {
	e.fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		first, _, _ := strings.Cut(req.LastUserText(), "\n")
		return fakemodel.Reply{Text: "ANSWER[" + first + "] and some more words to stream", Delay: pause, Chunks: 4, ChunkDelay: 60 * time.Millisecond}
	})
}

// startReplica runs a replica named name whose Web API calls go through
// its own tap, with extra settings.
func (c *chaos) startReplica(name string, extra map[string]string) *replicaProc {
	c.t.Helper()
	tap := newSlackTap(c.t, c.e.fake, name, &c.taps)
	saved := c.e.vars
	c.e.vars = map[string]string{}
	for k, v := range saved {
		c.e.vars[k] = v
	}
	c.e.vars["SLACK_API_URL"] = tap.url()
	for k, v := range extra {
		c.e.vars[k] = v
	}
	p := c.e.start(name)
	c.e.vars = saved
	c.procs[name] = p
	return p
}

func newChaos(t testing.TB, e *replicaEnv) *chaos {
	return &chaos{t: t, e: e, procs: map[string]*replicaProc{}}
}

// send starts threads threads of n messages each: every thread's first
// message, then the others of each thread at once, behind its running
// turn, the events alternating over conns.
func (c *chaos) send(threads, n int, conns []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range threads {
		m := &chaosMsg{text: fmt.Sprintf("c%d m1", i)}
		ts, env := c.e.mention(conns[i%len(conns)], "", m.text)
		m.thread, m.envs = ts, []string{env}
		c.roots = append(c.roots, ts)
		c.msgs = append(c.msgs, []*chaosMsg{m})
	}
	for k := 2; k <= n; k++ {
		c.sendRoundLocked(k, conns)
	}
}

// sendRound sends message k of every thread at once.
func (c *chaos) sendRound(k int, conns []int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sendRoundLocked(k, conns)
}

func (c *chaos) sendRoundLocked(k int, conns []int) {
	for i, root := range c.roots {
		m := &chaosMsg{thread: root, text: fmt.Sprintf("c%d m%d", i, k)}
		_, env := c.e.mention(conns[(i+k)%len(conns)], root, m.text)
		m.envs = []string{env}
		c.msgs[i] = append(c.msgs[i], m)
	}
}

// redeliver plays Slack: every 500 ms, an event not acked for a second is
// delivered again, on one of the live websockets.
func (c *chaos) redeliver() {
	c.stopRD, c.rdDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(c.rdDone)
		for n := 0; ; n++ {
			select {
			case <-c.stopRD:
				return
			case <-time.After(500 * time.Millisecond):
			}
			acked := map[string]bool{}
			for _, a := range c.e.fake.Acks() {
				acked[a.EnvelopeID] = true
			}
			sent := map[string]time.Time{}
			for _, env := range c.e.fake.Envelopes() {
				sent[env.ID] = env.Queued
			}
			conns := c.live()
			if len(conns) == 0 {
				continue
			}
			c.mu.Lock()
			for _, thread := range c.msgs {
				for _, m := range thread {
					last := m.envs[len(m.envs)-1]
					if slices.ContainsFunc(m.envs, func(id string) bool { return acked[id] }) || time.Since(sent[last]) < time.Second {
						continue
					}
					if id, err := c.e.fake.RedeliverTo(last, "timeout", conns[n%len(conns)]); err == nil {
						m.envs = append(m.envs, id)
					}
				}
			}
			c.mu.Unlock()
		}
	}()
}

// chaosCounts is what a run counts.
type chaosCounts struct {
	once, lost, twice, outOfOrder, openStreams, foreignWrites int
	// greetings counts the threads not greeted exactly once.
	greetings int
}

func (n chaosCounts) String() string {
	return fmt.Sprintf("exactly once %d, lost %d, answered twice %d, out of order %d, streams left open %d, writes by a replica not holding the thread %d, threads not greeted once %d",
		n.once, n.lost, n.twice, n.outOfOrder, n.openStreams, n.foreignWrites, n.greetings)
}

// chaosGreeting is in the agent's greeting, once per thread.
const chaosGreeting = "Here is what I can do"

// answered reports whether every message has an answer.
func (c *chaos) answered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, thread := range c.msgs {
		for _, m := range thread {
			if c.e.answers(m.thread, m.text) == 0 {
				return false
			}
		}
	}
	return true
}

// finish waits until every message is answered (or the deadline), gives
// duplicates time to show, and counts.
func (c *chaos) finish(deadline time.Duration) chaosCounts {
	c.t.Helper()
	end := time.Now().Add(deadline)
	for !c.answered() && time.Now().Before(end) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // a duplicate would come within a lease and a scan
	if c.stopRD != nil {
		close(c.stopRD)
		<-c.rdDone
	}
	if c.leases != nil {
		c.leases.end()
	}
	return c.count()
}

func (c *chaos) count() chaosCounts {
	var n chaosCounts
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, thread := range c.msgs {
		texts := botText(c.e.fake, replicaChannel, thread[0].thread)
		at := make([]int, len(thread))
		for k, m := range thread {
			switch got := c.e.answers(m.thread, m.text); {
			case got == 0:
				n.lost++
				c.t.Logf("lost: %q", m.text)
			case got == 1:
				n.once++
			default:
				n.twice++
				c.t.Logf("answered %d times: %q", got, m.text)
			}
			at[k] = indexOf(texts, "ANSWER["+m.text+"]")
		}
		n.outOfOrder += disorder(thread, texts, at, c.t)
		if g := countIn(texts, chaosGreeting); g != 1 {
			n.greetings++
			c.t.Logf("thread %s greeted %d times", thread[0].thread, g)
		}
	}
	for _, s := range c.e.fake.Streams() {
		if s.Channel == replicaChannel && !s.Stopped && !s.Expired && !s.Halted {
			n.openStreams++
			c.t.Logf("stream left open: %s in %s: %q", s.TS, s.ThreadTS, s.Text)
		}
	}
	n.foreignWrites = c.foreignWrites()
	return n
}

// countIn counts the texts holding sub.
func countIn(texts []string, sub string) int {
	n := 0
	for _, s := range texts {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// disorder counts the messages of a thread answered before an earlier
// one whose answer does not say it came late: a message Slack delivered
// late, after a later one was answered, is answered with a note naming
// it, and that is its place.
func disorder(thread []*chaosMsg, texts []string, at []int, t testing.TB) int {
	n := 0
	for k := range thread {
		for i := range k {
			if at[k] >= 0 && at[i] > at[k] && !strings.Contains(texts[at[i]], "Answering an earlier message") {
				n++
				t.Logf("out of order: %q answered before %q: %q", thread[k].text, thread[i].text, texts)
				break
			}
		}
	}
	return n
}

// foreignWrites counts the Slack writes a replica made in a thread while
// the lease table said, just before and just after, that another replica
// held the thread.
func (c *chaos) foreignWrites() int {
	if c.leases == nil {
		return 0
	}
	threadOf := map[string]string{} // message ts → thread ts
	for _, m := range c.e.fake.Messages() {
		th := m.ThreadTS
		if th == "" {
			th = m.TS
		}
		threadOf[m.TS] = th
	}
	for _, s := range c.e.fake.Streams() {
		threadOf[s.TS] = s.ThreadTS
	}
	n := 0
	for _, tap := range c.taps {
		for _, call := range tap.all() {
			if !chaosWrites[call.method] || call.form.Get("channel") != replicaChannel {
				continue
			}
			thread := call.form.Get("thread_ts")
			if thread == "" {
				thread = threadOf[call.form.Get("ts")]
			}
			if thread == "" {
				continue
			}
			key := c.e.fake.TeamID() + "/" + replicaChannel + "/" + thread
			before, _ := c.leases.holderAround(key, call.start)
			_, after := c.leases.holderAround(key, call.end)
			if before != "" && after != "" && before != call.replica && after != call.replica {
				n++
				c.t.Logf("%s wrote %s in %s while %s held it", call.replica, call.method, thread, before)
			}
		}
	}
	return n
}

// check fails the test unless every message was answered exactly once,
// in order, with no stream left open and no foreign write.
func (c *chaos) check(n chaosCounts, total int) {
	c.t.Helper()
	c.t.Logf("%s", n)
	if n.once != total || n.lost+n.twice+n.outOfOrder+n.openStreams+n.foreignWrites+n.greetings != 0 {
		c.t.Errorf("want every one of %d messages answered exactly once, in order: %s", total, n)
		c.dumpLogs()
	}
}

// dumpLogs writes each replica's log to AGENTBOT_TEST_LOGS (a folder),
// when set, so a failed run can be read afterwards.
func (c *chaos) dumpLogs() {
	dir := os.Getenv("AGENTBOT_TEST_LOGS")
	if dir == "" {
		return
	}
	stamp := fmt.Sprintf("%s-%d", strings.ReplaceAll(c.t.Name(), "/", "_"), time.Now().UnixNano())
	for name, p := range c.procs {
		path := fmt.Sprintf("%s/%s-%s.log", dir, stamp, name)
		if err := os.WriteFile(path, []byte(p.logs.String()), 0o644); err == nil {
			c.t.Logf("%s's log: %s", name, path)
		}
	}
	// And every Slack write each replica made, in the order made.
	var calls strings.Builder
	for _, tap := range c.taps {
		for _, call := range tap.all() {
			if chaosWrites[call.method] {
				fmt.Fprintf(&calls, "%s %s %s thread=%s ts=%s %q\n", call.start.Format("15:04:05.000"), call.replica, call.method,
					call.form.Get("thread_ts"), call.form.Get("ts"), call.form.Get("markdown_text")+call.form.Get("text"))
			}
		}
	}
	path := fmt.Sprintf("%s/%s-slack.log", dir, stamp)
	if err := os.WriteFile(path, []byte(calls.String()), 0o644); err == nil {
		c.t.Logf("Slack writes: %s", path)
	}
}

// pgChaos starts two replicas on one fresh database (url "" for pgtest's),
// with a lease of ttl, the model pausing pause, Slack's redelivery and the
// lease poll running. extraA goes to replica A only.
func pgChaos(t *testing.T, url string, ttl, pause time.Duration, extraA map[string]string) (*chaos, *replicaProc, *replicaProc) {
	t.Helper()
	e := newReplicaEnv(t, url, map[string]string{"AGENTBOT_LEASE_TTL": ttl.String()})
	chaosModel(e, pause)
	c := newChaos(t, e)
	a := c.startReplica("replica-a", extraA)
	b := c.startReplica("replica-b", nil)
	c.leases = pollLeases(t, e.url)
	return c, a, b
}

// TestChaosReplicaSIGSTOP: a replica frozen (SIGSTOP) mid-turn for three
// lease times, then woken (SIGCONT), while the other takes its threads
// over: the frozen one posts nothing after it wakes, and renewing never
// takes a released lease back. The one frozen is A, or B when A holds no
// thread: under load a replica may get no event of its own (Slack's
// redelivery hands them to the other), and freezing the one at work tests
// the same.
func TestChaosReplicaSIGSTOP(t *testing.T) {
	c, a, b := pgChaos(t, "", 2*time.Second, 800*time.Millisecond, nil)
	var frozen *replicaProc
	var mu sync.Mutex
	c.live = func() []int {
		mu.Lock()
		defer mu.Unlock()
		switch frozen {
		case a:
			return []int{b.conn}
		case b:
			return []int{a.conn}
		}
		return []int{a.conn, b.conn}
	}
	c.redeliver()
	c.send(8, 3, []int{a.conn, b.conn})
	// Freeze a replica while it works a thread (it holds a live lease), so
	// the freeze cuts that thread's work short and the other must take it
	// over.
	var victim *replicaProc
	waitUntil(t, "turns under way on a replica", waitLong, func() bool {
		if c.e.fm.Calls() < 4 {
			return false
		}
		switch {
		case c.leases.holds("replica-a"):
			victim = a
		case c.leases.holds("replica-b"):
			victim = b
		}
		return victim != nil
	})
	t.Logf("freezing %s", victim.name)
	mu.Lock()
	frozen = victim
	mu.Unlock()
	victim.signal(t, syscall.SIGSTOP)
	time.Sleep(6 * time.Second)
	victim.signal(t, syscall.SIGCONT)
	mu.Lock()
	frozen = nil
	mu.Unlock()
	c.check(c.finish(45*time.Second), 24)
}

// TestChaosReplicaSIGKILL: both replicas killed mid-stream, then started
// again: the streams the dead processes left open are closed, and every
// message is answered once.
func TestChaosReplicaSIGKILL(t *testing.T) {
	c, a, b := pgChaos(t, "", 2*time.Second, 300*time.Millisecond, nil)
	var mu sync.Mutex
	conns := []int{a.conn, b.conn}
	c.live = func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(conns) }
	c.redeliver()
	c.send(8, 3, []int{a.conn, b.conn})
	waitUntil(t, "streams open", waitLong, func() bool {
		open := 0
		for _, s := range c.e.fake.Streams() {
			if !s.Stopped {
				open++
			}
		}
		return open >= 3
	})
	mu.Lock()
	conns = nil
	mu.Unlock()
	a.kill()
	b.kill()
	a2 := c.startReplica("replica-a2", nil)
	b2 := c.startReplica("replica-b2", nil)
	mu.Lock()
	conns = []int{a2.conn, b2.conn}
	mu.Unlock()
	c.check(c.finish(45*time.Second), 24)
}

// TestChaosReplicaPostgresRestart: the database goes down mid-run and
// comes back two seconds later, stopped fast (every connection closed) or
// killed -9 (every connection dropped, then crash recovery); no message is
// lost or answered twice, and every transcript holds each message once.
func TestChaosReplicaPostgresRestart(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "kill-9"}[kill], func(t *testing.T) {
			cl := pgtest.Cluster(t)
			c, a, b := pgChaos(t, cl.CreateDB(t), 2*time.Second, 500*time.Millisecond, nil)
			c.live = func() []int { return []int{a.conn, b.conn} }
			c.redeliver()
			c.send(8, 3, []int{a.conn, b.conn})
			waitUntil(t, "turns under way", waitLong, func() bool { return c.e.fm.Calls() >= 4 })
			if kill {
				cl.Kill()
			} else {
				cl.Stop()
			}
			time.Sleep(2 * time.Second)
			cl.Start()
			c.check(c.finish(60*time.Second), 24)
			c.checkTranscripts()
		})
	}
}

// TestChaosReplicaDatabaseFlaps: both replicas' connections to the
// database are reset every 300 ms for four seconds while turns run (the
// probe's "connections reset every 300 ms"): every message is answered
// once, in order, no answer is replaced by a notice that blames the
// model, and every transcript holds each message once.
func TestChaosReplicaDatabaseFlaps(t *testing.T) {
	dbURL := pgtest.URL(t)
	u, _ := url.Parse(dbURL)
	pa, pb := newDBProxy(t, u.Host), newDBProxy(t, u.Host)
	e := newReplicaEnv(t, dbURL, map[string]string{"AGENTBOT_LEASE_TTL": "2s"})
	chaosModel(e, 300*time.Millisecond)
	c := newChaos(t, e)
	a := c.startReplica("replica-a", map[string]string{"AGENTBOT_DATABASE_URL": pa.through(t, dbURL)})
	b := c.startReplica("replica-b", map[string]string{"AGENTBOT_DATABASE_URL": pb.through(t, dbURL)})
	c.leases = pollLeases(t, e.url)
	c.live = func() []int { return []int{a.conn, b.conn} }
	c.redeliver()
	c.send(8, 3, []int{a.conn, b.conn})
	waitUntil(t, "turns under way", waitLong, func() bool { return c.e.fm.Calls() >= 4 })
	for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
		pa.kill()
		pb.kill()
	}
	c.check(c.finish(60*time.Second), 24)
	c.checkTranscripts()
	for _, thread := range c.msgs {
		for _, s := range botText(e.fake, replicaChannel, thread[0].thread) {
			if strings.Contains(s, "talking to the model") {
				t.Errorf("a notice blames the model for the database: %q", s)
			}
		}
	}
}

// checkTranscripts fails unless each thread's transcript holds each of
// its messages once.
func (c *chaos) checkTranscripts() {
	ctx := context.Background()
	st := c.e.store()
	defer st.Close()
	for _, thread := range c.msgs {
		for _, m := range thread {
			if got := c.e.userMessages(st, m.thread, m.text); got != 1 {
				c.t.Errorf("the transcript holds %q %d times, want 1", m.text, got)
				if s, _ := st.FindSession(ctx, c.e.fake.TeamID()+"/"+replicaChannel+"/"+m.thread); s != nil {
					for i, msg := range s.Messages {
						c.t.Logf("  transcript %d %s %q", i, msg.Role, msg.Content[:min(60, len(msg.Content))])
					}
				}
			}
		}
	}
}

// dbProxy is a TCP proxy between a replica and PostgreSQL that can cut
// its connections (as a kill -9 of the connection does) or stall them.
type dbProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	conns   []net.Conn
	stalled chan struct{} // closed while traffic flows
}

func newDBProxy(t testing.TB, target string) *dbProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{ln: ln, target: target, stalled: make(chan struct{})}
	close(p.stalled)
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go p.pipe(in, out)
			go p.pipe(out, in)
		}
	}()
	t.Cleanup(func() { ln.Close(); p.kill() })
	return p
}

func (p *dbProxy) pipe(from, to net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.stalled
			p.mu.Unlock()
			<-gate
			if _, werr := to.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	from.Close()
	to.Close()
}

// kill resets every connection through the proxy.
func (p *dbProxy) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, as a killed peer
		}
		c.Close()
	}
	p.conns = nil
}

// stall holds every byte for d.
func (p *dbProxy) stall(d time.Duration) {
	p.mu.Lock()
	gate := make(chan struct{})
	p.stalled = gate
	p.mu.Unlock()
	time.AfterFunc(d, func() { close(gate) })
}

// through is url with its host replaced by the proxy's.
func (p *dbProxy) through(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

// TestChaosReplicaDatabaseConnection: replica A's connections to the
// database are reset mid-run (kill -9 of the connection), then stall for
// ten seconds: A gives its threads up before its lease ends (renewals do
// not block past that point), B answers them, and A writes nothing in a
// thread B holds.
func TestChaosReplicaDatabaseConnection(t *testing.T) {
	dbURL := pgtest.URL(t)
	u, _ := url.Parse(dbURL)
	proxy := newDBProxy(t, u.Host)
	c, a, b := pgChaos(t, dbURL, 2*time.Second, 500*time.Millisecond, map[string]string{"AGENTBOT_DATABASE_URL": proxy.through(t, dbURL)})
	c.live = func() []int { return []int{a.conn, b.conn} }
	c.redeliver()
	c.send(8, 3, []int{a.conn, b.conn})
	waitUntil(t, "turns under way", waitLong, func() bool { return c.e.fm.Calls() >= 4 })
	proxy.kill()
	time.Sleep(1500 * time.Millisecond)
	proxy.stall(10 * time.Second)
	c.check(c.finish(60*time.Second), 24)
	c.checkTranscripts()
}

// TestChaosReplicaClockOffset: replica B's clock runs 16 minutes ahead.
// Events replica A admitted are delivered again on B's websocket: B takes
// each for a duplicate (dedupe follows the database's clock) and answers
// nothing twice.
func TestChaosReplicaClockOffset(t *testing.T) {
	e := newReplicaEnv(t, "", map[string]string{"AGENTBOT_LEASE_TTL": "2s"})
	chaosModel(e, 100*time.Millisecond)
	c := newChaos(t, e)
	a := c.startReplica("replica-a", nil)
	b := c.startReplica("replica-b", map[string]string{childClockEnv: "16m"})
	c.leases = pollLeases(t, e.url)
	c.send(8, 2, []int{a.conn})
	waitUntil(t, "the answers", waitLong, c.answered)
	c.mu.Lock()
	for _, thread := range c.msgs {
		for _, m := range thread {
			again, err := e.fake.RedeliverTo(m.envs[0], "timeout", b.conn)
			if err != nil {
				t.Fatal(err)
			}
			m.envs = append(m.envs, again)
		}
	}
	c.mu.Unlock()
	c.check(c.finish(30*time.Second), 16)
	if calls := e.fm.Calls(); calls != 16 {
		t.Errorf("%d model calls, want 16: a redelivery was admitted again", calls)
	}
}

// TestChaosReplicaSlack503: Slack answers six chat.stopStream calls with
// HTTP 503: each is tried again, every stream is closed, and no answer is
// posted a second time beside the stream that shows it.
func TestChaosReplicaSlack503(t *testing.T) {
	c, a, b := pgChaos(t, "", 2*time.Second, 100*time.Millisecond, nil)
	c.live = func() []int { return []int{a.conn, b.conn} }
	for range 6 {
		c.e.fake.FailHTTPNext("chat.stopStream", http.StatusServiceUnavailable)
	}
	c.redeliver()
	c.send(6, 2, []int{a.conn, b.conn})
	c.check(c.finish(45*time.Second), 12)
	failed := 0
	for _, call := range c.e.fake.CallsTo("chat.stopStream") {
		if call.Status == http.StatusServiceUnavailable {
			failed++
		}
	}
	if failed != 6 {
		t.Errorf("%d stopStream calls answered 503, want 6: the fault was not played", failed)
	}
}

// bboltChaos starts one replica on bbolt in dir, the test channel's
// default agent set there.
func bboltChaos(t *testing.T, dir string, pause time.Duration) *chaos {
	ctx := context.Background()
	t.Helper()
	e := newReplicaEnv(t, "", nil)
	delete(e.vars, "AGENTBOT_DATABASE_URL")
	st, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.SetChannelDefault(ctx, st, e.fake.TeamID(), replicaChannel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	chaosModel(e, pause)
	return newChaos(t, e)
}

// TestChaosFailingWrites: the bbolt replica's writes fail for three
// seconds (RLIMIT_FSIZE: the file size limit drops to one byte) while
// messages arrive: nothing that could not be journaled is acked (Slack
// delivers it again and the sender hears once that it was not saved),
// nothing acked is dropped, and every message is answered once.
func TestChaosFailingWrites(t *testing.T) {
	dir := t.TempDir()
	c := bboltChaos(t, dir, 300*time.Millisecond)
	p := c.startReplica("solo", map[string]string{"AGENTBOT_DATA": dir})
	c.live = func() []int { return []int{p.conn} }
	c.redeliver()
	c.send(6, 2, []int{p.conn})
	waitUntil(t, "turns under way", waitLong, func() bool { return c.e.fm.Calls() >= 2 })
	fsize(t, p, "1")
	more := newChaos(t, c.e)
	more.send(4, 1, []int{p.conn})
	time.Sleep(3 * time.Second)
	fsize(t, p, "unlimited")
	c.mu.Lock()
	for i := range more.msgs {
		c.msgs = append(c.msgs, more.msgs[i])
		c.roots = append(c.roots, more.roots[i])
	}
	c.mu.Unlock()
	c.check(c.finish(45*time.Second), 16)
	notices := 0
	for _, m := range c.e.fake.Messages() {
		if m.Kind == fakeslack.KindEphemeral && strings.Contains(m.Text, "couldn't save") {
			notices++
		}
	}
	if notices == 0 || notices > 4 {
		t.Errorf("%d not-saved notices, want one per message sent while writes failed (4): the fault was not played, or a sender heard it twice", notices)
	}
}

// fsize sets the process's soft file size limit (prlimit(1)); the hard
// limit stays, so the soft one can be raised again.
func fsize(t testing.TB, p *replicaProc, limit string) {
	t.Helper()
	out, err := exec.Command("prlimit", "--pid", strconv.Itoa(p.cmd.Process.Pid), "--fsize="+limit+":unlimited").CombinedOutput()
	if err != nil {
		t.Skipf("prlimit: %v %s", err, out)
	}
}

// TestChaosKillAfterAcks: the bbolt replica is SIGKILLed mid-turn, right
// after a burst of menu clicks was acked while more messages keep coming
// (so the journal still holds committed entries); restarted on its data
// folder, it answers every message and click exactly once: the journal
// replay knows each click by its dedupe key, and Slack delivers the
// messages not acked again (it never redelivers a click).
func TestChaosKillAfterAcks(t *testing.T) {
	dir := t.TempDir()
	c := bboltChaos(t, dir, 400*time.Millisecond)
	p := c.startReplica("solo", map[string]string{"AGENTBOT_DATA": dir})
	var mu sync.Mutex
	conns := []int{p.conn}
	c.live = func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(conns) }
	c.send(10, 2, []int{p.conn})
	waitUntil(t, "the acks", waitLong, func() bool { return len(c.e.fake.Acks()) >= 20 })
	clicks := c.clickMenu("*brief", p.conn)
	c.sendRound(3, []int{p.conn})
	waitUntil(t, "the clicks acked", waitLong, func() bool {
		acked := map[string]bool{}
		for _, a := range c.e.fake.Acks() {
			acked[a.EnvelopeID] = true
		}
		return !slices.ContainsFunc(clicks, func(env string) bool { return !acked[env] })
	})
	p.kill()
	p2 := c.startReplica("solo-again", map[string]string{"AGENTBOT_DATA": dir})
	mu.Lock()
	conns = []int{p2.conn}
	mu.Unlock()
	c.redeliver() // none is unacked: nothing to deliver again
	c.check(c.finish(45*time.Second), 40)
}

// TestChaosKillBeforeTheGreeting: the bbolt replica is SIGKILLed after it
// stored each thread's activation and before Slack took the greeting (the
// tap holds the greetings); restarted on its data folder, it greets every
// thread once, then answers every message once.
func TestChaosKillBeforeTheGreeting(t *testing.T) {
	dir := t.TempDir()
	c := bboltChaos(t, dir, 100*time.Millisecond)
	p := c.startReplica("solo", map[string]string{"AGENTBOT_DATA": dir})
	tap := c.taps[len(c.taps)-1]
	tap.mu.Lock()
	tap.hold = func(method string, form url.Values) bool {
		return method == "chat.postMessage" && strings.Contains(form.Get("blocks"), `"block_id":"greeting"`)
	}
	tap.mu.Unlock()
	var mu sync.Mutex
	conns := []int{p.conn}
	c.live = func() []int { mu.Lock(); defer mu.Unlock(); return slices.Clone(conns) }
	c.send(4, 2, []int{p.conn})
	waitUntil(t, "the greetings held", waitLong, func() bool { tap.mu.Lock(); defer tap.mu.Unlock(); return tap.held >= 4 })
	p.kill()
	p2 := c.startReplica("solo-again", map[string]string{"AGENTBOT_DATA": dir})
	mu.Lock()
	conns = []int{p2.conn}
	mu.Unlock()
	c.redeliver()
	c.check(c.finish(45*time.Second), 8)
}

// clickMenu clicks the menu button of command in every thread's greeting
// (waiting for the greetings), on websocket conn, and returns the clicks'
// envelopes; each click counts as one more message of its thread,
// answered "ANSWER[<command>]".
func (c *chaos) clickMenu(command string, conn int) []string {
	c.t.Helper()
	c.mu.Lock()
	roots := slices.Clone(c.roots)
	c.mu.Unlock()
	var envs []string
	for i, root := range roots {
		var greet fakeslack.Message
		waitUntil(c.t, "the greeting in thread "+root, waitLong, func() bool {
			for _, m := range c.e.fake.ThreadMessages(replicaChannel, root) {
				if m.Kind != fakeslack.KindUser && strings.Contains(string(m.Blocks), `"value":"`+command+`"`) {
					greet = m
					return true
				}
			}
			return false
		})
		id := menuActionID(c.t, greet.Blocks, command)
		env := c.e.fake.SendBlockAction(fakeslack.BlockAction{UserID: "U0REPLUSER", ChannelID: replicaChannel,
			MessageTS: greet.TS, ThreadTS: root, ActionID: id, Value: command})
		c.mu.Lock()
		c.msgs[i] = append(c.msgs[i], &chaosMsg{thread: root, text: command, envs: []string{env}})
		c.mu.Unlock()
		envs = append(envs, env)
	}
	return envs
}

// menuActionID is the action_id of the button whose value is command in
// blocks.
func menuActionID(t testing.TB, blocks []byte, command string) string {
	var list []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(blocks, &list); err != nil {
		t.Fatalf("the greeting's blocks: %v", err)
	}
	for _, b := range list {
		for _, e := range b.Elements {
			if e.Value == command {
				return e.ActionID
			}
		}
	}
	t.Fatalf("no button for %s in %s", command, blocks)
	return ""
}

// signal sends sig to the process.
func (p *replicaProc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}
