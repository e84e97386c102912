// Package running registers the turns running in this process by thread,
// so a person can stop one (the stop button, Slack's agent surface, a
// "stop" message) and the turn can tell who stopped it.
package running

import (
	"context"
	"sync"
)

// Turn is a running turn that can be stopped.
type Turn struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	by     string // who stopped it; "" while it runs
}

// Stop cancels the turn once and records who stopped it.
func (t *Turn) Stop(by string) {
	t.mu.Lock()
	if t.by == "" {
		t.by = by
	}
	t.mu.Unlock()
	t.cancel()
}

// StoppedBy says who stopped the turn, "" when nobody did.
func (t *Turn) StoppedBy() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.by
}

// Turns registers the running turns by thread key. The zero value is
// ready to use.
type Turns struct {
	mu sync.Mutex
	m  map[string]*Turn
}

// Start registers a turn of key, cancelled by cancel.
func (r *Turns) Start(key string, cancel context.CancelFunc) *Turn {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]*Turn{}
	}
	t := &Turn{cancel: cancel}
	r.m[key] = t
	return t
}

// End unregisters a finished turn.
func (r *Turns) End(key string, t *Turn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[key] == t {
		delete(r.m, key)
	}
}

// Stop stops the running turn of key; it reports whether one ran.
func (r *Turns) Stop(key, by string) bool {
	r.mu.Lock()
	t := r.m[key]
	r.mu.Unlock()
	if t == nil {
		return false
	}
	t.Stop(by)
	return true
}
