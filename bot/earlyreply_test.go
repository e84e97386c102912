package bot_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// heldSessions holds the creation of sessions until released: the worker
// of a new thread waits with its first item queued.
type heldSessions struct {
	bot.Store
	waiting chan struct{} // closed once a NewSession waits
	release chan struct{}
	once    sync.Once
}

func (h *heldSessions) NewSession(ctx context.Context, key string) (*transcript.Session, error) {
	h.once.Do(func() { close(h.waiting) })
	<-h.release
	return h.Store.NewSession(ctx, key)
}

// heldCommits holds admissions while hold is set, and commits them in
// order when released, as a slow database would.
type heldCommits struct {
	bot.Store
	mu   sync.Mutex
	hold bool
	held []func()
}

func (h *heldCommits) Admit(ctx context.Context, order int64, d []string, ttl time.Duration, key string, payload []byte) (<-chan error, <-chan storage.Admission) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.hold {
		_, done := h.Store.Admit(ctx, order, d, ttl, key, payload) // as a store without a journal
		return nil, done
	}
	out := make(chan storage.Admission, 1)
	h.held = append(h.held, func() { _, done := h.Store.Admit(ctx, order, d, ttl, key, payload); out <- <-done })
	return nil, out
}

func (h *heldCommits) waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.held)
}

// release commits the held admissions, oldest first, and stops holding.
func (h *heldCommits) release() {
	h.mu.Lock()
	held := h.held
	h.hold, h.held = false, nil
	h.mu.Unlock()
	for _, commit := range held {
		commit()
	}
}

// A reply without a mention, written in a new thread before the session
// of the mention that started it exists, is queued behind that mention
// and answered after it, never dropped: while the mention's admission is
// being committed, and while it waits in the queue for its session.
func TestReplyBeforeTheThreadsSessionExists(t *testing.T) {
	ctx := context.Background()
	t.Run("mention queued", func(t *testing.T) {
		var h *heldSessions
		r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
			h = &heldSessions{Store: c.Store, waiting: make(chan struct{}), release: make(chan struct{})}
			c.Store = h
		}})
		var once sync.Once
		release := func() { once.Do(func() { close(h.release) }) }
		t.Cleanup(release)
		storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
		r.model.Enqueue(fakemodel.Reply{Text: "The second answer."})
		thread, _ := r.mention("hello", "")
		select {
		case <-h.waiting:
		case <-time.After(10 * time.Second):
			t.Fatal("the mention's worker never created its session")
		}
		_, env := r.reply("what comes next?", thread)
		if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
			t.Fatal(err)
		}
		release()
		answeredInOrder(r, thread)
	})
	t.Run("mention being committed", func(t *testing.T) {
		var h *heldCommits
		r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
			h = &heldCommits{Store: c.Store, hold: true}
			c.Store = h
		}})
		t.Cleanup(h.release)
		storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
		r.model.Enqueue(fakemodel.Reply{Text: "The second answer."})
		thread, _ := r.mention("hello", "")
		_, env := r.reply("what comes next?", thread)
		acked := func() bool {
			return slices.ContainsFunc(r.slack.Acks(), func(a fakeslack.Ack) bool { return a.EnvelopeID == env })
		}
		r.waitFor("the reply admitted or dropped", func() bool { return h.waiting() == 2 || acked() })
		if acked() {
			t.Fatal("the reply was dropped (acked before its thread's first message was committed)")
		}
		h.release()
		answeredInOrder(r, thread)
	})
}

// answeredInOrder waits for the greeting the mention gets and the answer
// to the reply, and checks they came in that order.
func answeredInOrder(r *rig, thread string) {
	r.t.Helper()
	var greeting, answer int
	r.waitFor("the greeting and the answer", func() bool {
		msgs := r.botMessages(thread)
		greeting = slices.IndexFunc(msgs, func(m fakeslack.Message) bool { return strings.Contains(text(m), "Maren") })
		answer = slices.IndexFunc(msgs, func(m fakeslack.Message) bool { return strings.Contains(text(m), "The second answer.") })
		return greeting >= 0 && answer >= 0
	})
	if greeting > answer {
		r.t.Fatalf("the reply was answered (message %d) before the mention (message %d)", answer, greeting)
	}
	if n := r.model.Calls(); n != 1 || !strings.Contains(r.model.Requests()[0].LastUserText(), "what comes next?") {
		r.t.Fatalf("%d model calls; the reply did not reach the model", n)
	}
}
