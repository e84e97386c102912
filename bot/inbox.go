package bot

import (
	"sync"

	"github.com/slack-go/slack/socketmode"
)

// inbox is an unbounded FIFO between the socket loop and the intake, so the
// socket loop never blocks and acks stay fast under load.
type inbox struct {
	mu     sync.Mutex
	items  []socketmode.Event
	signal chan struct{}
}

func newInbox() *inbox { return &inbox{signal: make(chan struct{}, 1)} }

func (q *inbox) push(evt socketmode.Event) {
	q.mu.Lock()
	q.items = append(q.items, evt)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take returns everything queued, oldest first.
func (q *inbox) take() []socketmode.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}
