package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
)

// The Replica tests run real `agentbot serve` processes (two, mostly) on
// one PostgreSQL database, each with its own Socket Mode connection to one
// fake Slack, and one fake model that answers "ANSWER[<what was asked>]".

const replicaChannel = "C0REPLICAS"

// replicaEnv is what the replicas of a test share.
type replicaEnv struct {
	t    testing.TB
	fake *fakeslack.Server
	fm   *fakemodel.Server
	url  string
	vars map[string]string
}

// replicaProc is one running replica and the id of its websocket.
type replicaProc struct {
	*serveProc
	name string
	conn int
}

// newReplicaEnv prepares the database at url ("" for a fresh one from
// pgtest.URL) with product-lead as the test channel's default agent; extra
// settings go to every replica.
func newReplicaEnv(t testing.TB, url string, extra map[string]string) *replicaEnv {
	ctx := context.Background()
	t.Helper()
	if testing.Short() {
		t.Skip("starts agentbot processes")
	}
	if url == "" {
		url = pgtest.URL(t)
	}
	e := &replicaEnv{t: t, fake: fakeslack.New(t), fm: fakemodel.NewTB(t), url: url}
	st := e.store()
	if err := storage.SetChannelDefault(ctx, st, e.fake.TeamID(), replicaChannel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	e.fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		first, _, _ := strings.Cut(req.LastUserText(), "\n")
		return fakemodel.Reply{Text: "ANSWER[" + first + "]"}
	})
	e.vars = map[string]string{
		"SLACK_API_URL":         e.fake.APIURL(),
		"SLACK_BOT_TOKEN":       fakeslack.DefaultBotToken,
		"SLACK_APP_TOKEN":       fakeslack.DefaultAppToken,
		"OPENAI_BASE_URL":       e.fm.URL(),
		"OPENAI_API_KEY":        "k",
		"AGENTBOT_MODEL":        "m",
		"AGENTBOT_BUNDLES":      bundlesDir(t),
		"AGENTBOT_DATABASE_URL": url,
		"AGENTBOT_LOG_LEVEL":    "info",
	}
	for k, v := range extra {
		e.vars[k] = v
	}
	return e
}

// store opens the test's database as a replica would.
func (e *replicaEnv) store() *postgres.Store {
	e.t.Helper()
	st, err := postgres.Open(context.Background(), e.url, e.t.TempDir())
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// start runs a replica named name, with its own data folder, and waits
// for its websocket.
func (e *replicaEnv) start(name string) *replicaProc {
	e.t.Helper()
	before := e.fake.ConnIDs()
	vars := map[string]string{"AGENTBOT_REPLICA_ID": name, "AGENTBOT_DATA": e.t.TempDir()}
	for k, v := range e.vars {
		vars[k] = v
	}
	p := &replicaProc{serveProc: startServe(e.t, name, vars), name: name}
	err := e.fake.WaitFor(func() bool {
		for _, id := range e.fake.ConnIDs() {
			if !slices.Contains(before, id) {
				p.conn = id
			}
		}
		return p.conn != 0 || p.exited()
	}, waitLong)
	if err != nil || p.exited() {
		e.t.Fatalf("%s did not connect (err %v)\n%s", name, err, p.logs.String())
	}
	p.conn = e.settledConn(before, p.conn)
	return p
}

// settledConn is the replica's websocket once its connections have
// settled: the socketmode client may replace its first websocket right
// away (a reconnect while it starts), and events sent to a replaced id
// wait forever. It takes the newest id not in before that is still
// connected after two looks 200 ms apart, or conn when none settles.
func (e *replicaEnv) settledConn(before []int, conn int) int {
	newest := func() int {
		id := 0
		for _, c := range e.fake.ConnIDs() {
			if !slices.Contains(before, c) {
				id = max(id, c)
			}
		}
		return id
	}
	last := newest()
	for range 25 {
		time.Sleep(200 * time.Millisecond)
		now := newest()
		if now == last && now != 0 {
			return now
		}
		last = now
	}
	return conn
}

// turns counts the turns the replica logged as finished.
func (p *replicaProc) turns() int { return strings.Count(p.logs.String(), "msg=turn ") }

// mention sends "<@bot> text" in thread (a new thread when thread is ""),
// on websocket conn (0: any), and returns the message's ts and envelope id.
func (e *replicaEnv) mention(conn int, thread, text string) (ts, env string) {
	ts = e.fake.NextTS()
	ev := slackevents.AppMentionEvent{Type: "app_mention", User: "U0REPLUSER", Channel: replicaChannel,
		Text: "<@" + e.fake.BotUserID() + "> " + text, TimeStamp: ts, ThreadTimeStamp: thread}
	return ts, e.fake.SendEventWith(ev, fakeslack.EventOptions{Conn: conn})
}

// answers counts the bot messages of thread that hold the answer to text.
func (e *replicaEnv) answers(thread, text string) int {
	n := 0
	for _, s := range botText(e.fake, replicaChannel, thread) {
		if strings.Contains(s, "ANSWER["+text+"]") {
			n++
		}
	}
	return n
}

// userMessages counts the user messages of thread's transcript with
// content text.
func (e *replicaEnv) userMessages(st *postgres.Store, thread, text string) int {
	ctx := context.Background()
	e.t.Helper()
	s, err := st.FindSession(ctx, e.fake.TeamID()+"/"+replicaChannel+"/"+thread)
	if err != nil {
		e.t.Fatal(err)
	}
	if s == nil {
		return 0
	}
	n := 0
	for _, m := range s.Messages {
		if m.Role == "user" && m.Content == text {
			n++
		}
	}
	return n
}

// leaseHolder returns the replica holding thread's lease, or "".
func (e *replicaEnv) leaseHolder(thread string) string {
	e.t.Helper()
	conn, err := pgx.Connect(context.Background(), e.url)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var holder string
	err = conn.QueryRow(context.Background(), `SELECT holder FROM leases WHERE key = $1 AND expires > now()`,
		e.fake.TeamID()+"/"+replicaChannel+"/"+thread).Scan(&holder)
	if err == pgx.ErrNoRows {
		return ""
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return holder
}

// TestReplicaEveryThreadAnsweredOnce: 20 threads of two messages each,
// their events spread over both replicas' connections (a thread's second
// message goes to the other replica than its first), get each message
// answered exactly once, and both replicas work turns.
func TestReplicaEveryThreadAnsweredOnce(t *testing.T) {
	e := newReplicaEnv(t, "", nil)
	a, b := e.start("replica-a"), e.start("replica-b")
	conns := []int{a.conn, b.conn}
	const n = 20
	roots := make([]string, n)
	// The first messages: each replica works the threads it admitted.
	for i := range n {
		roots[i], _ = e.mention(conns[i%2], "", fmt.Sprintf("t%d first", i))
	}
	waitUntil(t, "the first answers", waitLong, func() bool {
		for i := range n {
			if e.answers(roots[i], fmt.Sprintf("t%d first", i)) == 0 {
				return a.exited() || b.exited()
			}
		}
		return true
	})
	// The second messages, at once, each on the other replica's
	// connection: that replica takes the thread and its session over.
	for i := range n {
		e.mention(conns[(i+1)%2], roots[i], fmt.Sprintf("t%d second", i))
	}
	waitUntil(t, "every answer", waitLong, func() bool {
		for i := range n {
			if e.answers(roots[i], fmt.Sprintf("t%d first", i)) == 0 || e.answers(roots[i], fmt.Sprintf("t%d second", i)) == 0 {
				return a.exited() || b.exited()
			}
		}
		return true
	})
	if a.exited() || b.exited() {
		t.Fatalf("a replica ended (a %v, b %v)", a.exited(), b.exited())
	}
	// Late duplicates would come within a lease scan or two.
	time.Sleep(500 * time.Millisecond)
	st := e.store()
	defer st.Close()
	for i := range n {
		for _, m := range []string{fmt.Sprintf("t%d first", i), fmt.Sprintf("t%d second", i)} {
			if got := e.answers(roots[i], m); got != 1 {
				t.Errorf("thread %d: %d answers to %q, want 1: %q", i, got, m, botText(e.fake, replicaChannel, roots[i]))
			}
			if got := e.userMessages(st, roots[i], m); got != 1 {
				t.Errorf("thread %d: transcript has %q %d times, want 1", i, m, got)
			}
		}
	}
	ta, tb := a.turns(), b.turns()
	t.Logf("turns: replica-a %d, replica-b %d", ta, tb)
	if ta == 0 || tb == 0 {
		t.Errorf("one replica did no work: a %d turns, b %d", ta, tb)
	}
	if ta+tb != 2*n {
		t.Errorf("%d turns logged, want %d", ta+tb, 2*n)
	}
	acked := map[int]int{}
	for _, env := range e.fake.Envelopes() {
		acked[env.Conn]++
	}
	if acked[a.conn] == 0 || acked[b.conn] == 0 {
		t.Errorf("events went to one connection only: %v", acked)
	}
}

// failover runs the kill scenario: replica A's turn waits for the model,
// A is SIGKILLed, B takes the thread over when A's 1s lease expires and
// answers. It checks that the answer is posted once and the message is in
// the transcript once, and returns the time from the kill to B's first
// output in the thread and to the answer.
func failover(tb testing.TB) (first, answered time.Duration) {
	return failoverBy(tb, false)
}

// failoverBy is failover with the replica frozen (SIGSTOP, woken once the
// answer is in) instead of killed when freeze is set.
func failoverBy(tb testing.TB, freeze bool) (first, answered time.Duration) {
	ctx := context.Background()
	tb.Helper()
	const ttl = time.Second
	e := newReplicaEnv(tb, "", map[string]string{"AGENTBOT_LEASE_TTL": ttl.String()})
	a, b := e.start("replica-a"), e.start("replica-b")
	e.fm.Enqueue(fakemodel.Reply{Hang: true})
	const text = "write the brief"
	root, _ := e.mention(a.conn, "", text)
	waitUntil(tb, "the held model call", waitLong, func() bool { return e.fm.Calls() == 1 || a.exited() })
	holder := e.leaseHolder(root)
	killed, survivor := a, b
	if holder == b.name {
		killed, survivor = b, a
	} else if holder != a.name {
		tb.Fatalf("thread lease held by %q during the turn", holder)
	}
	before := strings.Join(botText(e.fake, replicaChannel, root), "\x00")
	if freeze {
		if err := killed.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			tb.Fatal(err)
		}
		defer func() { _ = killed.cmd.Process.Signal(syscall.SIGCONT) }()
	} else {
		killed.kill()
	}
	start := time.Now()
	deadline := start.Add(waitLong)
	for e.answers(root, text) == 0 {
		if first == 0 && strings.Join(botText(e.fake, replicaChannel, root), "\x00") != before {
			first = time.Since(start)
		}
		if time.Now().After(deadline) || survivor.exited() {
			tb.Fatalf("no answer after the kill (survivor exited %v): %q\n%s", survivor.exited(), botText(e.fake, replicaChannel, root), survivor.logs.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	answered = time.Since(start)
	if first == 0 {
		first = answered
	}
	if limit := ttl + 5*time.Second; answered > limit {
		tb.Errorf("answered %s after the kill, want within the lease TTL and one turn (%s)", answered, limit)
	}
	time.Sleep(ttl) // a second answer would come within a scan
	if got := e.answers(root, text); got != 1 {
		tb.Errorf("%d answers after the failover, want 1: %q", got, botText(e.fake, replicaChannel, root))
	}
	if got := e.fm.Calls(); got != 2 {
		tb.Errorf("%d model calls, want 2 (the killed one and the resumed one)", got)
	}
	st := e.store()
	defer st.Close()
	if got := e.userMessages(st, root, text); got != 1 {
		tb.Errorf("the transcript has the message %d times, want 1", got)
	}
	if q, err := st.Pending(ctx, e.fake.TeamID()+"/"+replicaChannel+"/"+root); err != nil || len(q) != 0 {
		tb.Errorf("queue after the failover: %d items, err %v", len(q), err)
	}
	if survivor.turns() != 1 {
		tb.Errorf("the survivor logged %d turns, want 1", survivor.turns())
	}
	return first, answered
}

// TestReplicaKilledMidTurn: a replica SIGKILLed while its turn waits for
// the model; the other replica finishes the thread within the lease TTL
// and one turn, posting one answer.
func TestReplicaKilledMidTurn(t *testing.T) {
	first, answered := failover(t)
	t.Logf("failover: first output %s, answer %s after the kill (lease TTL 1s)", first.Round(time.Millisecond), answered.Round(time.Millisecond))
}

// BenchmarkReplicaFailover reports the failover time of the kill scenario
// with a 1s lease TTL: kill to the survivor's first output in the thread
// (failover-ms), and to the answer (answer-ms).
func BenchmarkReplicaFailover(b *testing.B) {
	var first, answered time.Duration
	for range b.N {
		f, a := failover(b)
		first += f
		answered += a
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "failover-ms")
	b.ReportMetric(float64(answered.Milliseconds())/float64(b.N), "answer-ms")
}

// BenchmarkReplicaFailoverFrozen is BenchmarkReplicaFailover with the
// replica frozen (SIGSTOP) instead of killed: its lease runs out while it
// sleeps, and it posts nothing once woken.
func BenchmarkReplicaFailoverFrozen(b *testing.B) {
	var first, answered time.Duration
	for range b.N {
		f, a := failoverBy(b, true)
		first += f
		answered += a
	}
	b.ReportMetric(float64(first.Milliseconds())/float64(b.N), "failover-ms")
	b.ReportMetric(float64(answered.Milliseconds())/float64(b.N), "answer-ms")
}

// TestReplicaRedeliveryPostsNothing: an event replica A handled is
// delivered again (Slack's retry) on replica B's connection: B acks it and
// posts nothing, and the model is not called again.
func TestReplicaRedeliveryPostsNothing(t *testing.T) {
	e := newReplicaEnv(t, "", nil)
	a, b := e.start("replica-a"), e.start("replica-b")
	const text = "the only question"
	root, env := e.mention(a.conn, "", text)
	waitUntil(t, "the answer", waitLong, func() bool { return e.answers(root, text) == 1 || a.exited() })
	calls, posted := e.fm.Calls(), len(e.fake.Messages())
	thread := strings.Join(botText(e.fake, replicaChannel, root), "\x00")

	again, err := e.fake.RedeliverTo(env, "timeout", b.conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.WaitAck(again, waitLong); err != nil {
		t.Fatalf("the redelivery was not acked: %v", err)
	}
	// B handles its events in order: once a later message on B's
	// connection is answered, the redelivery was handled.
	const later = "a later question"
	root2, _ := e.mention(b.conn, "", later)
	waitUntil(t, "the later answer", waitLong, func() bool { return e.answers(root2, later) == 1 || b.exited() })
	for _, env := range e.fake.Envelopes() {
		if env.ID == again && env.Conn != b.conn {
			t.Fatalf("the redelivery went to connection %d, not B's %d", env.Conn, b.conn)
		}
	}
	if got := strings.Join(botText(e.fake, replicaChannel, root), "\x00"); got != thread {
		t.Errorf("the thread changed after the redelivery:\nbefore %q\nafter  %q", thread, got)
	}
	if got := e.fm.Calls(); got != calls+1 {
		t.Errorf("%d model calls, want %d (the later question only)", got, calls+1)
	}
	for _, m := range e.fake.Messages()[posted:] {
		if m.Channel == replicaChannel && (m.ThreadTS == root || m.TS == root) {
			t.Errorf("posted in the redelivered thread: %+v", m)
		}
	}
	st := e.store()
	defer st.Close()
	if got := e.userMessages(st, root, text); got != 1 {
		t.Errorf("the transcript has the message %d times, want 1", got)
	}
}

// saveReply is a model reply that saves content to brief.md.
func saveReply(content string) fakemodel.Reply {
	args, _ := json.Marshal(map[string]string{"path": "brief.md", "content": content})
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: string(args)}}}
}

// TestReplicaUploadsFromEither: a document saved in a thread worked by
// replica A is uploaded; after A stops, a second save in the same thread,
// worked by B (another data folder), is uploaded as v2 with its bytes.
func TestReplicaUploadsFromEither(t *testing.T) {
	e := newReplicaEnv(t, "", nil)
	// B starts only once A has worked the first turn: started together, B's
	// start-up scan may take A's just-admitted thread before A leases it,
	// which is right for the bot but not what this test is about.
	a := e.start("replica-a")
	const v1, v2 = "# Brief\n\nversion one\n", "# Brief\n\nversion two, longer\n"
	e.fm.Enqueue(saveReply(v1), fakemodel.Reply{Text: "Saved the first version."})
	root, _ := e.mention(a.conn, "", "draft the brief")
	waitUntil(t, "the first upload", waitLong, func() bool { return (len(e.fake.Uploads()) == 1 && a.turns() == 1) || a.exited() })
	if a.turns() != 1 {
		t.Fatalf("replica A logged %d turns, want 1 (the first save)", a.turns())
	}
	b := e.start("replica-b")
	a.stop(waitLong)

	e.fm.Enqueue(saveReply(v2), fakemodel.Reply{Text: "Saved the second version."})
	e.mention(b.conn, root, "revise it")
	waitUntil(t, "the second upload", waitLong, func() bool {
		return (len(e.fake.Uploads()) == 2 && b.turns() == 1) || strings.Contains(strings.Join(botText(e.fake, replicaChannel, root), ""), "couldn't upload") || b.exited()
	})
	ups := e.fake.Uploads()
	if len(ups) != 2 {
		t.Fatalf("%d uploads, want 2; thread: %q\n%s", len(ups), botText(e.fake, replicaChannel, root), b.logs.String())
	}
	if b.turns() != 1 {
		t.Errorf("replica B logged %d turns, want 1 (the second save)", b.turns())
	}
	for i, want := range []string{v1, v2} {
		u := ups[i]
		if string(u.Content) != want || u.ThreadTS != root || u.Filename != "brief.md" {
			t.Errorf("upload %d: %q named %q in thread %q, want %q in %q", i+1, u.Content, u.Filename, u.ThreadTS, want, root)
		}
	}
	if !strings.Contains(ups[1].Title, "v2") {
		t.Errorf("the second upload is titled %q, want v2", ups[1].Title)
	}
}

// TestReplicaReadsDocumentFromEither: a document saved in a thread worked
// by replica A can be read by the thread's next turn on replica B, whose
// data folder never held it: documents live in the store.
func TestReplicaReadsDocumentFromEither(t *testing.T) {
	e := newReplicaEnv(t, "", nil)
	a, b := e.start("replica-a"), e.start("replica-b")
	e.fm.Enqueue(saveReply("# Brief\n\nversion one\n"), fakemodel.Reply{Text: "Saved."})
	root, _ := e.mention(a.conn, "", "draft the brief")
	waitUntil(t, "the first turn", waitLong, func() bool { return a.turns() == 1 || a.exited() })
	a.stop(waitLong)

	e.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: `{"path": "/outputs/brief.md"}`}}},
		fakemodel.Reply{Text: "Read it."})
	readCall := e.fm.Calls() + 2 // the request that carries read_file's result
	e.mention(b.conn, root, "what does it say")
	waitUntil(t, "the second turn", waitLong, func() bool { return b.turns() == 1 || b.exited() })
	reqs := e.fm.Requests()
	if len(reqs) < readCall {
		t.Fatalf("%d model calls, want at least %d", len(reqs), readCall)
	}
	msgs := reqs[readCall-1].Messages
	if last := msgs[len(msgs)-1]; last.Role != "tool" || !strings.Contains(last.Content, "version one") {
		t.Errorf("replica B could not read the document replica A saved: read_file answered %+v", last)
	}
}

// replicaScale is the size of TestReplicaConcurrency: threads × turns.
// AGENTBOT_TEST_REPLICA_THREADS overrides the thread count.
func replicaScale() (threads, turns int) {
	threads = 100
	if testing.Short() {
		threads = 20
	}
	if n, err := strconv.Atoi(os.Getenv("AGENTBOT_TEST_REPLICA_THREADS")); err == nil && n > 0 {
		threads = n
	}
	return threads, 3
}

// TestReplicaConcurrency: two replicas, 100 threads of 3 turns each, the
// turns of a thread one after the other (the next message is sent when
// the last was answered), the threads in parallel, the events spread over
// both connections: every thread gets 3 answers, one per message, and its
// transcript has each message once.
func TestReplicaConcurrency(t *testing.T) {
	e := newReplicaEnv(t, "", map[string]string{"AGENTBOT_MAX_CONCURRENT_TURNS": "32"})
	a, b := e.start("replica-a"), e.start("replica-b")
	conns := []int{a.conn, b.conn}
	threads, turns := replicaScale()
	msg := func(i, k int) string { return fmt.Sprintf("thread %d turn %d", i, k) }
	roots := make([]string, threads)
	sent := make([]int, threads)
	start := time.Now()
	for i := range threads {
		roots[i], _ = e.mention(conns[i%2], "", msg(i, 1))
		sent[i] = 1
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		done := 0
		for i := range threads {
			if e.answers(roots[i], msg(i, sent[i])) == 0 {
				continue
			}
			if sent[i] == turns {
				done++
				continue
			}
			sent[i]++
			e.mention(conns[(i+sent[i])%2], roots[i], msg(i, sent[i]))
		}
		if done == threads {
			break
		}
		if time.Now().After(deadline) || a.exited() || b.exited() {
			t.Fatalf("%d of %d threads done after %s (a exited %v, b exited %v)", done, threads, time.Since(start), a.exited(), b.exited())
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(start)
	t.Logf("%d threads × %d turns over 2 replicas in %s; turns: a %d, b %d", threads, turns, took.Round(time.Millisecond), a.turns(), b.turns())
	time.Sleep(300 * time.Millisecond) // room for a duplicate to show
	st := e.store()
	defer st.Close()
	for i := range threads {
		for k := 1; k <= turns; k++ {
			if got := e.answers(roots[i], msg(i, k)); got != 1 {
				t.Errorf("thread %d: %d answers to turn %d, want 1", i, got, k)
			}
			if got := e.userMessages(st, roots[i], msg(i, k)); got != 1 {
				t.Errorf("thread %d: the transcript has turn %d's message %d times, want 1", i, k, got)
			}
		}
	}
	if got, want := a.turns()+b.turns(), threads*turns; got != want {
		t.Errorf("%d turns logged, want %d", got, want)
	}
	if a.turns() == 0 || b.turns() == 0 {
		t.Errorf("one replica did no work: a %d turns, b %d", a.turns(), b.turns())
	}
}

// TestReplicaDatabaseGoesAway: the database of a running replica stops.
// /healthz turns 503 naming the database; a message sent meanwhile is not
// acked (Slack delivers it again) and nothing is answered; once the
// database is back, Slack's redelivery of that message is answered, the
// next message too, and /healthz is 200 again.
func TestReplicaDatabaseGoesAway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agentbot processes and a PostgreSQL server")
	}
	cl := pgtest.Cluster(t)
	e := newReplicaEnv(t, cl.CreateDB(t), map[string]string{"AGENTBOT_HTTP_ADDR": "127.0.0.1:0", "AGENTBOT_LEASE_TTL": "1s"})
	a := e.start("replica-a")
	addrRE := regexp.MustCompile(`serving /healthz and /metrics" addr=(\S+)`)
	var base string
	waitUntil(t, "the HTTP listener", waitLong, func() bool {
		if m := addrRE.FindStringSubmatch(a.logs.String()); m != nil {
			base = "http://" + m[1]
		}
		return base != "" || a.exited()
	})
	waitUntil(t, "healthz 200", waitLong, func() bool { code, _ := httpGet(t, base+"/healthz"); return code == 200 })
	root, _ := e.mention(a.conn, "", "before the outage")
	waitUntil(t, "the first answer", waitLong, func() bool { return e.answers(root, "before the outage") == 1 || a.exited() })

	cl.Stop()
	var body string
	waitUntil(t, "healthz 503", waitLong, func() bool {
		var code int
		code, body = httpGet(t, base+"/healthz")
		return code == 503
	})
	if !strings.Contains(body, "postgresql") {
		t.Errorf("healthz body %q does not name the database", body)
	}
	// A mention, and a plain reply in the bot's thread, while the
	// database is down: neither is acked, each sender is told once, also
	// when Slack delivers the message again meanwhile.
	const during, plain = "during the outage", "a plain reply during the outage"
	_, env := e.mention(a.conn, root, during)
	env2 := e.fake.SendEventWith(slackevents.MessageEvent{Type: "message", User: "U0REPLUSER", Channel: replicaChannel,
		ChannelType: "channel", Text: plain, TimeStamp: e.fake.NextTS(), ThreadTimeStamp: root}, fakeslack.EventOptions{Conn: a.conn})
	notices := func() int {
		n := 0
		for _, m := range e.fake.Messages() {
			if m.Kind == fakeslack.KindEphemeral && strings.Contains(m.Text, "database is unreachable") {
				n++
			}
		}
		return n
	}
	waitUntil(t, "the notices", waitLong, func() bool { return notices() == 2 || a.exited() })
	retry, err := e.fake.Redeliver(env, "timeout")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{env, env2, retry} {
		if _, err := e.fake.WaitAck(id, time.Second); err == nil {
			t.Errorf("a message that could not be persisted was acked: Slack will not deliver it again")
		}
	}
	if n := notices(); n != 2 {
		t.Errorf("%d notices, want 2 (one per message, none for the redelivery)", n)
	}
	if a.exited() {
		t.Fatalf("the replica ended while the database was down\n%s", a.logs.String())
	}

	cl.Start()
	waitUntil(t, "healthz 200 again", waitLong, func() bool { code, _ := httpGet(t, base+"/healthz"); return code == 200 })
	// Slack delivers the unacked events again.
	for _, id := range []string{env, env2} {
		again, err := e.fake.Redeliver(id, "timeout")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.fake.WaitAck(again, waitLong); err != nil {
			t.Fatalf("the redelivery was not acked: %v\n%s", err, a.logs.String())
		}
	}
	const after = "after the outage"
	e.mention(a.conn, root, after)
	waitUntil(t, "the answers after the outage", waitLong, func() bool {
		return (e.answers(root, during) == 1 && e.answers(root, plain) == 1 && e.answers(root, after) == 1) || a.exited()
	})
	if a.exited() {
		t.Fatalf("the replica ended\n%s", a.logs.String())
	}
	st := e.store()
	defer st.Close()
	for _, m := range []string{"before the outage", during, plain, after} {
		if got := e.userMessages(st, root, m); got != 1 {
			t.Errorf("the transcript has %q %d times, want 1", m, got)
		}
	}
}

// replicaLoadRun is what a load run over two replica processes measured.
type replicaLoadRun struct {
	wall time.Duration
	acks []time.Duration // ack latency of every message sent, in sending order
	// cpuA and cpuB are the replicas' CPU time (user and system) up to
	// the last answer; 0 where /proc is missing.
	cpuA, cpuB time.Duration
	a, b       *replicaProc
}

// replicaLoad runs two replicas (AGENTBOT_MAX_CONCURRENT_TURNS maxTurns
// each) on one database against a model that answers after latency, and
// drives threads conversations of turns messages: every thread starts at
// once, its next message is sent when the answer to the last one has
// arrived (a stopped stream), the events alternate between the two
// connections. It fails unless every message got one answer.
func replicaLoad(tb testing.TB, threads, turns int, latency time.Duration, maxTurns int) replicaLoadRun {
	tb.Helper()
	e := newReplicaEnv(tb, "", map[string]string{"AGENTBOT_MAX_CONCURRENT_TURNS": strconv.Itoa(maxTurns)})
	e.fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ANSWER[" + req.LastUserText() + "]", Delay: latency}
	})
	run := replicaLoadRun{a: e.start("replica-a"), b: e.start("replica-b")}
	conns := []int{run.a.conn, run.b.conn}
	msg := func(i, k int) string { return fmt.Sprintf("thread %03d turn %d", i, k) }
	roots := make([]string, threads)
	sent := make([]int, threads)
	var envs []string
	start := time.Now()
	for i := range threads {
		var env string
		roots[i], env = e.mention(conns[i%2], "", msg(i, 1))
		sent[i] = 1
		envs = append(envs, env)
	}
	deadline := start.Add(time.Duration(turns)*(latency+20*time.Second) + time.Minute)
	answered := map[string]bool{} // "thread ts/text" of answers
	stops := 0
	for {
		var stopped []fakeslack.Stream
		stopped, stops = e.fake.StoppedSince(stops)
		for _, s := range stopped {
			answered[s.ThreadTS+"/"+strings.TrimSpace(s.Text)] = true
		}
		done := 0
		for i := range threads {
			if !answered[roots[i]+"/ANSWER["+msg(i, sent[i])+"]"] {
				continue
			}
			if sent[i] == turns {
				done++
				continue
			}
			sent[i]++
			_, env := e.mention(conns[(i+sent[i])%2], roots[i], msg(i, sent[i]))
			envs = append(envs, env)
		}
		if done == threads {
			break
		}
		if time.Now().After(deadline) || run.a.exited() || run.b.exited() {
			tb.Fatalf("%d of %d threads done after %s (a exited %v, b exited %v)", done, threads, time.Since(start), run.a.exited(), run.b.exited())
		}
		time.Sleep(10 * time.Millisecond)
	}
	run.wall = time.Since(start)
	run.cpuA, run.cpuB = cpuTime(run.a.cmd.Process.Pid), cpuTime(run.b.cmd.Process.Pid)
	for _, env := range envs {
		d, err := e.fake.WaitAck(env, 3*time.Second)
		if err != nil {
			tb.Fatalf("ack of %s: %v", env, err)
		}
		run.acks = append(run.acks, d)
	}
	if got, want := e.fm.Calls(), threads*turns; got != want {
		tb.Errorf("%d model calls, want %d (one per message)", got, want)
	}
	for i := range threads {
		for k := 1; k <= turns; k++ {
			if n := e.answers(roots[i], msg(i, k)); n != 1 {
				tb.Errorf("thread %d: %d answers to turn %d, want 1", i, n, k)
			}
		}
	}
	return run
}

// BenchmarkReplicaAckP99 is the ack latency under load with PostgreSQL:
// two replica processes, 200 busy threads (3 turns each, a model that
// takes 500 ms per call, 50 turns at a time per replica). Target: p99 <
// 50 ms.
func BenchmarkReplicaAckP99(b *testing.B) {
	var acks, burst, later []time.Duration
	for range b.N {
		run := replicaLoad(b, 200, 3, 500*time.Millisecond, 50)
		acks = append(acks, run.acks...)
		burst = append(burst, run.acks[:200]...) // the 200 threads' first messages, at once
		later = append(later, run.acks[200:]...) // replies, while turns run
	}
	b.ReportMetric(msOf(percentile(burst, 0.99)), "burst-ack-p99-ms")
	b.ReportMetric(msOf(percentile(later, 0.99)), "busy-ack-p99-ms")
	b.ReportMetric(msOf(percentile(acks, 0.50)), "ack-p50-ms")
	b.ReportMetric(msOf(percentile(acks, 0.99)), "ack-p99-ms")
	b.ReportMetric(msOf(slices.Max(acks)), "ack-max-ms")
}

// BenchmarkReplicaThroughput: 200 threads × 3 turns over two replica
// processes, 200 turns at a time each, a model that takes 500 ms per call.
// With enough turn slots every thread runs at once, so the ideal wall time
// is turns × latency (1.5 s); it reports wall/ideal (target ≤ 1.3).
func BenchmarkReplicaThroughput(b *testing.B) {
	const turns, latency = 3, 500 * time.Millisecond
	var wall time.Duration
	var ta, tb int
	var cpu time.Duration
	for range b.N {
		run := replicaLoad(b, 200, turns, latency, 200)
		wall += run.wall
		ta += run.a.turns()
		tb += run.b.turns()
		cpu += run.cpuA + run.cpuB
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "replicas-cpu-s")
	wall /= time.Duration(b.N)
	ideal := turns * latency
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(ideal.Seconds(), "ideal-s")
	b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
	b.ReportMetric(float64(ta)/float64(b.N), "turns-a")
	b.ReportMetric(float64(tb)/float64(b.N), "turns-b")
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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

// cpuTime is the CPU time (user and system) process pid used so far, read
// from /proc; 0 when it cannot be read.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command (which may hold spaces) start at ")".
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
