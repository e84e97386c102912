package bot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/storetest"
)

// replicaTTL is the thread lease TTL of the replica tests: a dead replica's
// thread is taken over this long after its last renewal.
const replicaTTL = 300 * time.Millisecond

// cluster is several bots (replicas) sharing one store, each with its own
// Socket Mode connection to one fake Slack, and one fake model.
type cluster struct {
	t     *testing.T
	slack *fakeslack.Server
	model *fakemodel.Server
	st    *bolt.Store
	cat   *catalog.Catalog
	// engine and bot, when set, change each replica's engine and bot
	// config.
	engine func(*engine.Config)
	bot    func(*bot.Config)
	// lb, when set, runs the replicas in HTTP mode behind it: Slack's
	// requests go round-robin to them (startHTTP).
	lb *balancer
}

// replica is one bot of a cluster. Its store and Slack Web API calls go
// through switches that kill() turns off, as the death of its process
// would: nothing it does afterwards reaches the store or Slack.
type replica struct {
	id    string
	conn  int // its websocket's id in the fake
	bot   *bot.Bot
	store *replicaStore
	turns atomic.Int32
	dups  atomic.Int32 // events its admission found duplicates
	stop  context.CancelFunc
	done  chan error
}

func newCluster(t *testing.T) *cluster {
	ctx := context.Background()
	c := &cluster{t: t, slack: fakeslack.New(t), model: fakemodel.NewTB(t)}
	c.cat = catalog.Load(catalog.Options{Bundles: []string{fixtures.Bundles(t)}})
	st, err := bolt.Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	c.st = st
	t.Cleanup(func() { st.Close() })
	if err := storage.SetChannelDefault(ctx, st, c.slack.TeamID(), channel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	// The model answers what it was asked.
	c.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "ANSWER[" + req.LastUserText() + "]"}
	})
	return c
}

// start runs a replica named id and waits for its websocket.
func (c *cluster) start(id string, grace time.Duration) *replica {
	return c.startWrapped(id, grace, nil)
}

// startWrapped is start with the replica's store, as its bot sees it,
// wrapped by wrap (nil: as it is).
func (c *cluster) startWrapped(id string, grace time.Duration, wrap func(*replicaStore) bot.Store) *replica {
	t := c.t
	r := &replica{id: id, store: &replicaStore{Store: c.st}}
	before := c.slack.ConnIDs()
	ecfg := testEngineConfig(c.model, r.store, c.st, c.cat)
	if c.engine != nil {
		c.engine(&ecfg)
	}
	api := c.slack.Client(slack.OptionHTTPClient(&http.Client{Transport: deadSwitch{dead: &r.store.dead}}))
	var st bot.Store = r.store
	if wrap != nil {
		st = wrap(r.store)
	}
	var sock *socketmode.Client
	secret := signingSecret
	if c.lb == nil {
		sock, secret = socketmode.New(api), ""
	}
	bcfg := bot.Config{
		API: api, Socket: sock, SigningSecret: secret, Engine: engine.New(ecfg), Store: st, Folders: storage.Folders{Dir: c.st.Dir()},
		Catalog: func() *catalog.Catalog { return c.cat }, ShutdownGrace: grace, NoStreaming: true,
		ReplicaID: id, LeaseTTL: replicaTTL, Observer: turnCounter{&r.turns, &r.dups},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	}
	if c.bot != nil {
		c.bot(&bcfg)
	}
	b, err := bot.New(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	r.bot = b
	ctx, cancel := context.WithCancel(context.Background())
	r.stop, r.done = cancel, make(chan error, 1)
	go func() { r.done <- b.Run(ctx) }()
	if c.lb != nil {
		c.waitFor(id+" to take requests", b.Connected)
		c.lb.add(b.SlackHandler())
		t.Cleanup(func() { r.shutdown(t) })
		return r
	}
	c.waitFor(id+" to connect", func() bool {
		for _, id := range c.slack.ConnIDs() {
			if !slices.Contains(before, id) {
				r.conn = id
			}
		}
		return r.conn != 0 && b.Connected()
	})
	t.Cleanup(func() { r.shutdown(t) })
	return r
}

// shutdown stops the replica as a process stop would (idempotent).
func (r *replica) shutdown(t *testing.T) {
	if r.stop == nil {
		return
	}
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("%s: bot.Run: %v", r.id, err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("%s did not stop", r.id)
	}
	r.stop = nil
}

// kill is the death of the replica's process: from now on nothing it does
// reaches the store or Slack (its lease stays until it expires), then its
// bot is stopped.
func (r *replica) kill(t *testing.T) {
	r.store.dead.Store(true)
	r.shutdown(t)
}

func (c *cluster) waitFor(what string, cond func() bool) { c.t.Helper(); waitFor(c.t, what, cond) }

// mention sends "@agentbot text" in thread ("" starts one) on the websocket
// conn (0: round-robin over the replicas).
func (c *cluster) mention(conn int, text, thread string) (ts, envelope string) {
	ts = c.slack.NextTS()
	envelope = c.slack.SendEventWith(slackevents.AppMentionEvent{Type: "app_mention", User: user, Channel: channel,
		Text: "<@" + c.slack.BotUserID() + "> " + text, TimeStamp: ts, ThreadTimeStamp: thread}, fakeslack.EventOptions{Conn: conn})
	return ts, envelope
}

// count is how many of the bot's messages in thread contain sub.
func (c *cluster) count(thread, sub string) int {
	n := 0
	for _, m := range c.slack.ThreadMessages(channel, thread) {
		if m.Kind != fakeslack.KindUser && strings.Contains(text(m), sub) {
			n++
		}
	}
	return n
}

// idle waits until no thread has queued items.
func (c *cluster) idle() {
	ctx := context.Background()
	c.t.Helper()
	c.waitFor("the queues to empty", func() bool {
		keys, err := c.st.PendingKeys(ctx)
		return err == nil && len(keys) == 0
	})
}

// replicaStore is the shared store as one replica sees it: dead after the
// replica's death; failDequeues makes that many CompleteFenced calls fail, as a
// crash between posting and dequeueing would leave the item.
type replicaStore struct {
	*bolt.Store
	dead         atomic.Bool
	failLeases   atomic.Bool // Lease fails: renewals do not reach the store
	failDequeues atomic.Int32
	failed       atomic.Int32
}

var errDead = errors.New("replica is dead")

func (s *replicaStore) SaveSession(ctx context.Context, x *transcript.Session) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.SaveSession(ctx, x)
}

func (s *replicaStore) NewSession(ctx context.Context, key string) (*transcript.Session, error) {
	if s.dead.Load() {
		return nil, errDead
	}
	return s.Store.NewSession(ctx, key)
}

func (s *replicaStore) CompleteFenced(ctx context.Context, f storage.Fence, seq uint64, meta map[string]string) error {
	if s.dead.Load() {
		return errDead
	}
	if s.failDequeues.Add(-1) >= 0 {
		s.failed.Add(1)
		return errors.New("injected dequeue failure")
	}
	return s.Store.CompleteFenced(ctx, f, seq, meta)
}

func (s *replicaStore) SaveSessionFenced(ctx context.Context, f storage.Fence, x *transcript.Session) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.SaveSessionFenced(ctx, f, x)
}

func (s *replicaStore) TakeLease(ctx context.Context, key, holder string, ttl time.Duration) (storage.Fence, bool, error) {
	if s.dead.Load() {
		return storage.Fence{}, false, errDead
	}
	if s.failLeases.Load() {
		return storage.Fence{}, false, errors.New("injected lease failure")
	}
	return s.Store.TakeLease(ctx, key, holder, ttl)
}

func (s *replicaStore) RenewLease(ctx context.Context, f storage.Fence, ttl time.Duration) error {
	if s.dead.Load() {
		return errDead
	}
	if s.failLeases.Load() {
		return errors.New("injected lease failure")
	}
	return s.Store.RenewLease(ctx, f, ttl)
}

func (s *replicaStore) CheckFence(ctx context.Context, f storage.Fence) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.CheckFence(ctx, f)
}

func (s *replicaStore) ReleaseLease(ctx context.Context, key, holder string) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.ReleaseLease(ctx, key, holder)
}

// deadSwitch fails every Slack Web API call once dead is set.
type deadSwitch struct{ dead *atomic.Bool }

func (d deadSwitch) RoundTrip(req *http.Request) (*http.Response, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return http.DefaultTransport.RoundTrip(req)
}

// turnCounter counts the turns a replica started, and the duplicates its
// admission dropped.
type turnCounter struct{ n, dups *atomic.Int32 }

func (c turnCounter) EventReceived(string)                                       {}
func (c turnCounter) EventDeduped()                                              { c.dups.Add(1) }
func (c turnCounter) TurnStarted()                                               { c.n.Add(1) }
func (c turnCounter) TurnFinished(time.Duration, int, int, int, int, int, error) {}
func (c turnCounter) Uploaded(error)                                             {}
func (c turnCounter) QueueDepth(int)                                             {}
func (c turnCounter) ApprovalDecided(string)                                     {}
func (c turnCounter) Feedback(string, string, string)                            {}

// Messages spread over two replicas' connections: every message of every
// thread is answered exactly once, each thread greeted once, and both
// replicas ran turns.
func TestReplicaEachThreadAnsweredOnce(t *testing.T) {
	c := newCluster(t)
	a, b := c.start("replica-a", 5*time.Second), c.start("replica-b", 5*time.Second)
	const n = 6
	threads := make([]string, n)
	for i := range threads {
		threads[i], _ = c.mention(0, fmt.Sprintf("question t%d m1", i), "")
	}
	for i, th := range threads {
		c.waitFor("the first answers", func() bool { return c.count(th, fmt.Sprintf("ANSWER[question t%d m1]", i)) > 0 })
	}
	for i, th := range threads {
		c.mention(0, fmt.Sprintf("question t%d m2", i), th)
	}
	for i, th := range threads {
		c.waitFor("the second answers", func() bool { return c.count(th, fmt.Sprintf("ANSWER[question t%d m2]", i)) > 0 })
	}
	c.idle()
	time.Sleep(2 * replicaTTL / 3) // a double would come from the next scan
	for i, th := range threads {
		for _, m := range []string{"m1", "m2"} {
			if got := c.count(th, fmt.Sprintf("ANSWER[question t%d %s]", i, m)); got != 1 {
				t.Errorf("thread %d message %s answered %d times", i, m, got)
			}
		}
		if got := c.count(th, "Maren"); got != 1 {
			t.Errorf("thread %d greeted %d times", i, got)
		}
	}
	// A replica that loses a thread's lease mid-turn (a starved CPU, past
	// the TTL) may have its turn run again by the other, by design: the
	// answer is posted once (checked above). So each model call beyond
	// one per message must come with a turn run again, never within one.
	turns := int(a.turns.Load() + b.turns.Load())
	if calls := c.model.Calls(); calls < 2*n || calls-2*n > turns-2*n {
		t.Errorf("%d model calls for %d messages in %d turns", calls, 2*n, turns)
	}
	if a.turns.Load() == 0 || b.turns.Load() == 0 {
		t.Errorf("turns: %s ran %d, %s ran %d; want both to work", a.id, a.turns.Load(), b.id, b.turns.Load())
	}
	conns := map[int]bool{}
	for _, e := range c.slack.Envelopes() {
		conns[e.Conn] = true
	}
	if !conns[a.conn] || !conns[b.conn] {
		t.Errorf("events went to websockets %v, want both %d and %d", conns, a.conn, b.conn)
	}
}

// Replica A dies in the middle of a turn (the model holds its reply),
// without releasing its lease: once the lease expires, replica B resumes
// the turn from the transcript and posts the one answer.
func TestReplicaTakeoverAfterDeath(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t)
	var first atomic.Bool
	c.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		if first.CompareAndSwap(false, true) {
			return fakemodel.Reply{Text: "LATE ANSWER", Delay: time.Minute} // ends when A's client gives up
		}
		return fakemodel.Reply{Text: "FINAL ANSWER to " + req.LastUserText()}
	})
	a, b := c.start("replica-a", 50*time.Millisecond), c.start("replica-b", 5*time.Second)
	thread, _ := c.mention(a.conn, "draft the brief", "")
	c.waitFor("A's model call", func() bool { return c.model.Calls() == 1 })
	key := c.slack.TeamID() + "/" + channel + "/" + thread
	if ok, err := storetest.Lease(ctx, c.st, key, "someone-else", time.Minute); err != nil || ok {
		t.Fatalf("the thread's lease is free while A works it (%v, %v)", ok, err)
	}
	died := time.Now()
	a.kill(t)
	c.waitFor("B's answer", func() bool { return c.count(thread, "FINAL ANSWER") > 0 })
	took := time.Since(died)
	c.idle()
	time.Sleep(2 * replicaTTL / 3)
	if got := c.count(thread, "FINAL ANSWER"); got != 1 {
		t.Errorf("the answer was posted %d times", got)
	}
	if got := c.count(thread, "LATE ANSWER"); got != 0 {
		t.Error("the dead replica's answer was posted")
	}
	if got := c.count(thread, "Maren"); got != 1 {
		t.Errorf("greeted %d times", got)
	}
	if b.turns.Load() != 1 || c.model.Calls() != 2 {
		t.Errorf("B ran %d turns, model calls %d; want 1 and 2", b.turns.Load(), c.model.Calls())
	}
	// B resumed the turn: the message is in the transcript once.
	req := c.model.Requests()[1]
	n := 0
	for _, m := range req.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "draft the brief") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("B's request has the message %d times, want 1 (resumed, not repeated)", n)
	}
	t.Logf("taken over %s after the death (lease TTL %s)", took.Round(time.Millisecond), replicaTTL)
}

// An event A admitted and answered is redelivered to B: B acks it and
// queues and posts nothing.
func TestReplicaRedeliveryPostsNothing(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t)
	a, b := c.start("replica-a", 5*time.Second), c.start("replica-b", 5*time.Second)
	thread, env := c.mention(a.conn, "what is next", "")
	c.waitFor("the answer", func() bool { return c.count(thread, "ANSWER[what is next]") > 0 })
	c.idle()
	before := len(c.slack.ThreadMessages(channel, thread))
	again, err := c.slack.RedeliverTo(env, "timeout", b.conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.slack.WaitAck(again, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.slack.Envelopes() {
		if e.ID == again && e.Conn != b.conn {
			t.Fatalf("the redelivery went to websocket %d, not B's %d", e.Conn, b.conn)
		}
	}
	// Acked means admitted or found a duplicate: nothing may be queued.
	if keys, err := c.st.PendingKeys(ctx); err != nil || len(keys) != 0 {
		t.Fatalf("the redelivery was queued: %v %v", keys, err)
	}
	time.Sleep(2 * replicaTTL / 3)
	if after := len(c.slack.ThreadMessages(channel, thread)); after != before {
		t.Errorf("the redelivery posted %d messages", after-before)
	}
	if c.model.Calls() != 1 || a.turns.Load()+b.turns.Load() != 1 {
		t.Errorf("model calls %d, turns %d; want 1 and 1", c.model.Calls(), a.turns.Load()+b.turns.Load())
	}
}

// A crash after the reply was posted but before the item left the queue
// (here: the dequeue fails) makes a replica replay the item: it posts
// nothing again, neither an answer nor a greeting.
func TestReplicaReplayAfterPostedPostsNothing(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"answer", "what is next", "ANSWER[what is next]"},
		{"greeting", "hello", "Maren"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			// The replay here comes from the failed dequeue, not a lapsed
			// lease: a longer lease keeps a starved CPU (CI's -race under
			// load) from handing the first turn over mid-way, which may run
			// it twice by design.
			c.bot = func(cfg *bot.Config) { cfg.LeaseTTL = 5 * replicaTTL }
			a, b := c.start("replica-a", 5*time.Second), c.start("replica-b", 5*time.Second)
			a.store.failDequeues.Store(1)
			thread, _ := c.mention(a.conn, tc.text, "")
			c.waitFor("the reply", func() bool { return c.count(thread, tc.want) > 0 })
			c.idle() // replayed by a scan, then dequeued
			if a.store.failed.Load() != 1 {
				t.Fatalf("%d dequeues failed, want 1", a.store.failed.Load())
			}
			time.Sleep(2 * 5 * replicaTTL / 3)
			if got := c.count(thread, tc.want); got != 1 {
				t.Errorf("the reply was posted %d times", got)
			}
			if got := len(c.slack.ThreadMessages(channel, thread)) - 1; got != 1+min(c.model.Calls(), 1) {
				t.Errorf("%d bot messages, %d model calls", got, c.model.Calls())
			}
			if a.turns.Load()+b.turns.Load() > 1 {
				t.Errorf("%d turns ran", a.turns.Load()+b.turns.Load())
			}
		})
	}
}

// Replica A, alive, cannot renew its lease (the store refuses it): it gives
// the thread up before the lease expires, cancelling its turn, so its late
// answer is never posted, and replica B finishes the thread with one answer.
func TestReplicaLeaseNotRenewedCancelsTurn(t *testing.T) {
	c := newCluster(t)
	var first atomic.Bool
	c.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		if first.CompareAndSwap(false, true) {
			return fakemodel.Reply{Text: "LATE ANSWER", Delay: 3 * replicaTTL}
		}
		return fakemodel.Reply{Text: "FINAL ANSWER"}
	})
	a, b := c.start("replica-a", 5*time.Second), c.start("replica-b", 5*time.Second)
	thread, _ := c.mention(a.conn, "draft the brief", "")
	c.waitFor("A's model call", func() bool { return c.model.Calls() == 1 })
	a.store.failLeases.Store(true)
	c.waitFor("B's answer", func() bool { return c.count(thread, "FINAL ANSWER") > 0 })
	c.idle()
	time.Sleep(4 * replicaTTL) // A's late answer would have arrived by now
	if got := c.count(thread, "FINAL ANSWER"); got != 1 {
		t.Errorf("the answer was posted %d times", got)
	}
	for _, bad := range []string{"LATE ANSWER", "interrupted", "⚠️"} {
		if got := c.count(thread, bad); got != 0 {
			t.Errorf("A posted %q after giving the thread up", bad)
		}
	}
	if a.turns.Load() != 1 || b.turns.Load() != 1 {
		t.Errorf("turns: A %d, B %d; want 1 each", a.turns.Load(), b.turns.Load())
	}
}
