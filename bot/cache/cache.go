// Package cache holds the bot's bounded per-user memory: Map, a map that
// keeps its most recently used entries up to a size, and Locks, a mutex
// per key that exists only while it is held or waited for.
//
// A small own type rather than github.com/hashicorp/golang-lru/v2: the
// bot needs a size bound and an atomic swap, and golang-lru's expirable
// cache starts a cleanup goroutine per cache that nothing stops.
package cache

import (
	"container/list"
	"sync"
)

// DefaultSize bounds a Map whose Max is not set: room for every user of a
// large workspace.
const DefaultSize = 10_000

// Map is a map of at most Max entries (DefaultSize when Max <= 0); adding
// to a full Map drops its least recently used entry. The zero value is
// empty and ready; a Map is safe for concurrent use.
type Map[K comparable, V any] struct {
	Max int

	mu sync.Mutex
	ll *list.List // of *entry[K, V], most recently used first
	m  map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// Get returns the value of k and whether there is one.
func (c *Map[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		return e.Value.(*entry[K, V]).val, true
	}
	var zero V
	return zero, false
}

// Put sets the value of k.
func (c *Map[K, V]) Put(k K, v V) { c.Swap(k, v) }

// Swap sets the value of k and returns the one it had, if any.
func (c *Map[K, V]) Swap(k K, v V) (old V, loaded bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok {
		c.ll.MoveToFront(e)
		ent := e.Value.(*entry[K, V])
		old, ent.val = ent.val, v
		return old, true
	}
	if c.m == nil {
		c.m, c.ll = map[K]*list.Element{}, list.New()
	}
	c.m[k] = c.ll.PushFront(&entry[K, V]{k, v})
	limit := c.Max
	if limit <= 0 {
		limit = DefaultSize
	}
	for c.ll.Len() > limit {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.m, last.Value.(*entry[K, V]).key)
	}
	return old, false
}

// Len returns the number of entries.
func (c *Map[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// Locks is a mutex per key; a key's mutex is forgotten once nobody holds
// or waits for it, so Locks holds only the keys in use. The zero value is
// ready.
type Locks[K comparable] struct {
	mu sync.Mutex
	m  map[K]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int // holders and waiters
}

// Lock locks k's mutex and returns its unlock.
func (l *Locks[K]) Lock(k K) (unlock func()) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[K]*keyLock{}
	}
	kl := l.m[k]
	if kl == nil {
		kl = &keyLock{}
		l.m[k] = kl
	}
	kl.users++
	l.mu.Unlock()
	kl.Lock()
	return func() {
		kl.Unlock()
		l.mu.Lock()
		if kl.users--; kl.users == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
}

// Len returns the number of keys in use.
func (l *Locks[K]) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.m)
}
