package bot

import (
	"encoding/json"
	"sync"
)

// threads runs one worker per thread with queued items: turns of a thread
// run one at a time, in order; different threads run in parallel.
type threads struct {
	b      *Bot
	mu     sync.Mutex
	active map[string]*worker
	wg     sync.WaitGroup
}

type worker struct {
	// kicked is set when new work arrives while the worker runs, so it
	// looks at the queue again before it exits.
	kicked bool
}

func newThreads(b *Bot) *threads { return &threads{b: b, active: map[string]*worker{}} }

// wake makes sure a worker drains the queue of key.
func (t *threads) wake(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.active[key]; ok {
		w.kicked = true
		return
	}
	w := &worker{}
	t.active[key] = w
	t.b.obs.QueueDepth(len(t.active))
	t.wg.Add(1)
	go t.run(key, w)
}

// wait blocks until every worker has finished.
func (t *threads) wait() { t.wg.Wait() }

func (t *threads) run(key string, w *worker) {
	defer t.wg.Done()
	for {
		t.mu.Lock()
		w.kicked = false
		t.mu.Unlock()
		t.drain(key)
		t.mu.Lock()
		if !w.kicked || t.b.turnCtx.Err() != nil || t.b.stopping.Load() {
			delete(t.active, key)
			t.b.obs.QueueDepth(len(t.active))
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
}

// drain handles the thread's queued items, oldest first. An item leaves the
// queue only after it was handled, so a crash replays it. At shutdown no new
// item starts; the queue waits for the next start.
func (t *threads) drain(key string) {
	b := t.b
	for b.turnCtx.Err() == nil && !b.stopping.Load() {
		seq, payload, ok, err := b.cfg.Store.Next(key)
		if err != nil {
			b.log.Error("read queue", "err", err)
			return
		}
		if !ok {
			return
		}
		var it item
		if err := json.Unmarshal(payload, &it); err != nil {
			b.log.Error("drop unreadable queued item", "seq", seq, "err", err)
		} else {
			b.process(seq, it)
		}
		if b.turnCtx.Err() != nil {
			return // cancelled at shutdown: keep the item for the restart
		}
		if err := b.cfg.Store.Dequeue(key, seq); err != nil {
			b.log.Error("dequeue", "err", err)
			return
		}
	}
}
