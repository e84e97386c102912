package cache

import (
	"fmt"
	"sync"
	"testing"
)

func TestMapEvictsLeastRecentlyUsed(t *testing.T) {
	c := Map[string, int]{Max: 3}
	for i, k := range []string{"a", "b", "c"} {
		c.Put(k, i)
	}
	c.Get("a") // a is used again: b is now the oldest
	c.Put("d", 3)
	if c.Len() != 3 {
		t.Fatalf("Len = %d, want 3", c.Len())
	}
	if _, ok := c.Get("b"); ok {
		t.Error("b, the least recently used, was kept")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("%s was dropped", k)
		}
	}
	// Replacing a value does not grow the map.
	c.Put("d", 4)
	if v, _ := c.Get("d"); v != 4 || c.Len() != 3 {
		t.Errorf("d = %d, Len %d; want 4, 3", v, c.Len())
	}
}

// One entry per user, however many days or greetings: the zero Map stays
// within DefaultSize.
func TestMapZeroValueBounded(t *testing.T) {
	var c Map[int, string]
	for i := range DefaultSize + 500 {
		c.Put(i, "x")
	}
	if c.Len() != DefaultSize {
		t.Fatalf("Len = %d, want %d", c.Len(), DefaultSize)
	}
	if _, ok := c.Get(0); ok {
		t.Error("the oldest entry was kept")
	}
	if _, ok := c.Get(DefaultSize + 499); !ok {
		t.Error("the newest entry was dropped")
	}
}

func TestMapSwap(t *testing.T) {
	var c Map[string, string]
	if old, loaded := c.Swap("u", "2025-01-01"); loaded || old != "" {
		t.Fatalf("first Swap = %q, %v", old, loaded)
	}
	if old, loaded := c.Swap("u", "2025-01-02"); !loaded || old != "2025-01-01" {
		t.Fatalf("second Swap = %q, %v", old, loaded)
	}
	// Concurrent swaps of one value: exactly one sees it new.
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := 0
	for range 20 {
		wg.Go(func() {
			if old, _ := c.Swap("v", "day"); old != "day" {
				mu.Lock()
				fresh++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if fresh != 1 {
		t.Errorf("%d swaps saw the value new, want 1", fresh)
	}
}

func TestLocksForgetUnusedKeys(t *testing.T) {
	var l Locks[string]
	for i := range 100 {
		l.Lock(fmt.Sprint("user", i))()
	}
	if n := l.Len(); n != 0 {
		t.Fatalf("%d keys kept after their unlocks, want 0", n)
	}
	// While held, the key's mutex excludes others; it is forgotten only
	// after the last waiter is done.
	unlock := l.Lock("u")
	var wg sync.WaitGroup
	var mu sync.Mutex
	inside := 0
	for range 5 {
		wg.Go(func() {
			defer l.Lock("u")()
			mu.Lock()
			inside++
			mu.Unlock()
		})
	}
	mu.Lock()
	got := inside
	mu.Unlock()
	if got != 0 {
		t.Errorf("%d got the lock while it was held", got)
	}
	unlock()
	wg.Wait()
	if inside != 5 || l.Len() != 0 {
		t.Errorf("inside %d, keys %d; want 5, 0", inside, l.Len())
	}
}
