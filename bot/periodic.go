package bot

import (
	"context"
	"time"
)

// startPeriodic runs, until ctx ends or the bot stops, the bot's periodic
// work on one ticker: the approval sweep at every tick, the first at start,
// so calls that timed out while no bot ran are expired too (approval.go);
// and the queue scan about every LeaseTTL/3.
func (t *threads) startPeriodic(ctx context.Context) {
	b := t.b
	every := b.approvalSweepEvery()
	scanEvery := max(int(b.scanInterval()/every), 1) // in ticks
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		sw := &sweeper{b: b, queued: map[string]bool{}}
		for n := 0; ; n++ {
			if b.stopping.Load() || ctx.Err() != nil {
				return
			}
			sw.sweep()
			if n > 0 && n%scanEvery == 0 {
				t.scan()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// scan wakes a worker for each thread with queued items and no local
// worker: a thread of a replica that died, or an item another replica
// admitted for a thread this one was working.
func (t *threads) scan() {
	keys, err := t.b.cfg.Store.PendingKeys(context.TODO())
	if err != nil {
		t.b.log.Error("scan queued threads", "err", err)
		return
	}
	for _, k := range keys {
		t.wakeIdle(k)
	}
}
