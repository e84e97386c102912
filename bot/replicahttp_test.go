package bot_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/storage"
)

// balancer is a load balancer in front of HTTP-mode replicas: each
// request goes to the next replica, round-robin, as any replica may take
// any request.
type balancer struct {
	srv      *httptest.Server
	mu       sync.Mutex
	handlers []http.Handler
	next     atomic.Int64
	served   []atomic.Int64 // requests per replica, by start order
}

func (l *balancer) add(h http.Handler) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handlers = append(l.handlers, h)
}

func (l *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	hs := l.handlers
	l.mu.Unlock()
	if len(hs) == 0 {
		http.Error(w, "no replica", http.StatusBadGateway)
		return
	}
	i := int(l.next.Add(1)-1) % len(hs)
	l.served[i].Add(1)
	hs[i].ServeHTTP(w, r)
}

// newHTTPCluster is a cluster whose replicas run in HTTP mode behind a
// balancer (deliver has the fake Slack send there).
func newHTTPCluster(t *testing.T) *cluster {
	c := newCluster(t)
	c.lb = &balancer{served: make([]atomic.Int64, 8)}
	c.lb.srv = httptest.NewServer(c.lb)
	t.Cleanup(c.lb.srv.Close)
	return c
}

// deliver starts the fake's HTTP delivery to the balancer.
func (c *cluster) deliver(opt fakeslack.HTTPOptions) {
	if err := c.slack.DeliverHTTP(c.lb.srv.URL+"/slack/events", signingSecret, opt); err != nil {
		c.t.Fatal(err)
	}
	c.lb.next.Store(0) // the url_verification aside, the next request goes to the first replica
	c.lb.served[0].Store(0)
}

// Two replicas in HTTP mode behind a load balancer share the store's
// queue as over Socket Mode: requests reach both, both run turns, and
// every message is answered once.
func TestReplicaHTTPEachThreadAnsweredOnce(t *testing.T) {
	c := newHTTPCluster(t)
	a, b := c.start("replica-a", 5*time.Second), c.start("replica-b", 5*time.Second)
	c.deliver(fakeslack.HTTPOptions{})
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
	time.Sleep(2 * replicaTTL / 3)
	for i, th := range threads {
		for _, m := range []string{"m1", "m2"} {
			if got := c.count(th, fmt.Sprintf("ANSWER[question t%d %s]", i, m)); got != 1 {
				t.Errorf("thread %d message %s answered %d times", i, m, got)
			}
		}
	}
	if calls := c.model.Calls(); calls != 2*n {
		t.Errorf("%d model calls for %d messages", calls, 2*n)
	}
	if c.lb.served[0].Load() == 0 || c.lb.served[1].Load() == 0 {
		t.Errorf("requests: %d to %s, %d to %s; want both to take some", c.lb.served[0].Load(), a.id, c.lb.served[1].Load(), b.id)
	}
	if a.turns.Load() == 0 || b.turns.Load() == 0 {
		t.Errorf("turns: %s ran %d, %s ran %d; want both to work", a.id, a.turns.Load(), b.id, b.turns.Load())
	}
	if c.slack.TotalConnections() != 0 {
		t.Errorf("%d Socket Mode connections in HTTP mode", c.slack.TotalConnections())
	}
}

// holdingStore holds every admission until release is closed; after the
// replica's death (dead) it fails them, as a process that died would
// never have persisted them.
type holdingStore struct {
	bot.Store
	dead    *atomic.Bool
	once    sync.Once
	held    chan struct{} // closed when the first admission is held
	release chan struct{}
}

func (h *holdingStore) Admit(ctx context.Context, order int64, d []string, ttl time.Duration, key string, payload []byte) (<-chan error, <-chan storage.Admission) {
	h.once.Do(func() { close(h.held) })
	<-h.release
	if h.dead.Load() {
		ch := make(chan storage.Admission, 1)
		ch <- storage.Admission{Err: errors.New("replica died")}
		return nil, ch
	}
	return h.Store.Admit(ctx, order, d, ttl, key, payload)
}

// Chaos: replica A is killed while it holds a request it has not acked
// (its admission never reaches the store); Slack's retry, after its
// timeout, lands on replica B, which admits and answers it. The message
// is answered once, and nothing is lost.
func TestReplicaHTTPKilledHoldingARequest(t *testing.T) {
	c := newHTTPCluster(t)
	var hold *holdingStore
	a := c.startWrapped("replica-a", 5*time.Second, func(s *replicaStore) bot.Store {
		hold = &holdingStore{Store: s, dead: &s.dead, held: make(chan struct{}), release: make(chan struct{})}
		return hold
	})
	c.start("replica-b", 5*time.Second)
	c.deliver(fakeslack.HTTPOptions{Timeout: 300 * time.Millisecond})
	thread, env := c.mention(0, "question held", "") // the balancer's first request: replica A
	select {
	case <-hold.held:
	case <-time.After(10 * time.Second):
		t.Fatal("replica A never held the request")
	}
	if _, err := c.slack.WaitAck(env, 10*time.Second); err != nil { // Slack's retry, answered by B
		t.Fatal(err)
	}
	a.store.dead.Store(true) // A dies holding the first request
	close(hold.release)
	a.shutdown(t)
	c.waitFor("the answer", func() bool { return c.count(thread, "ANSWER[question held]") > 0 })
	c.idle()
	time.Sleep(2 * replicaTTL / 3)
	if got := c.count(thread, "ANSWER[question held]"); got != 1 {
		t.Errorf("answered %d times, want 1", got)
	}
	if c.model.Calls() != 1 {
		t.Errorf("%d model calls, want 1", c.model.Calls())
	}
	retried := false
	for _, d := range c.slack.Deliveries() {
		if d.EnvelopeID == env && d.Attempt > 0 && d.Reason == "http_timeout" && d.Status == http.StatusOK && !d.Late {
			retried = true
		}
	}
	if !retried {
		t.Errorf("no retry with http_timeout answered 200 in time: %+v", c.slack.Deliveries())
	}
}
