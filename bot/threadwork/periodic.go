package threadwork

import (
	"context"
	"time"
)

// StartPeriodic runs, until ctx ends or the work stops, tick every
// interval (the first at once) and, about every ScanInterval, the queue
// scan: a worker for each thread with queued items and none here (a
// thread of a replica that died, or an item another replica admitted for
// a thread this one was working).
func (w *Work) StartPeriodic(ctx context.Context, every time.Duration, tick func()) {
	scanEvery := max(int(w.ScanInterval()/every), 1) // in ticks
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for n := 0; ; n++ {
			if w.stopping.Load() || ctx.Err() != nil {
				return
			}
			tick()
			if n > 0 && n%scanEvery == 0 {
				w.scan(ctx)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// scan wakes a worker for each thread with queued items and no local
// worker.
func (w *Work) scan(ctx context.Context) {
	keys, err := w.cfg.Store.PendingKeys(ctx)
	if err != nil {
		w.cfg.Log.Error("scan queued threads", "err", err)
		return
	}
	for _, k := range keys {
		w.wakeIdle(k)
	}
}
