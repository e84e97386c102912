package slackhttp

import (
	"sync"
	"time"
)

// ReplayWindow is how long a request's key is remembered: Slack's
// timestamps are good for 5 minutes either side of now.
const ReplayWindow = 10 * time.Minute

// Replays remembers the requests (Request.Key) one process took within
// ReplayWindow, in memory: an exact replay to the same process is told at
// once, without a write to the store. Safe for concurrent use.
type Replays struct {
	mu    sync.Mutex
	seen  map[string]time.Time
	swept time.Time
}

// Seen reports whether key was seen within ReplayWindow before now, and
// records it.
func (r *Replays) Seen(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen == nil {
		r.seen = map[string]time.Time{}
	}
	if now.Sub(r.swept) > time.Minute {
		for k, at := range r.seen {
			if now.Sub(at) > ReplayWindow {
				delete(r.seen, k)
			}
		}
		r.swept = now
	}
	if at, ok := r.seen[key]; ok && now.Sub(at) <= ReplayWindow {
		return true
	}
	r.seen[key] = now
	return false
}
