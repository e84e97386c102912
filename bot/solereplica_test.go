package bot_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// hungRenewals is a bbolt store whose lease renewals hang until their
// context ends, as they do in a process short of CPU, whose renewal comes
// after the point where a replica gives its thread up.
type hungRenewals struct {
	*bolt.Store
	tried atomic.Int32
}

func (s *hungRenewals) RenewLease(ctx context.Context, _ storage.Fence, _ time.Duration) error {
	s.tried.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

// One serve on bbolt is the store's sole replica: a turn that lasts
// several lease times while no renewal could be made is answered once,
// with one model call. A replica that gave the thread up would have
// cancelled the turn and asked the model again.
func TestSoleReplicaNeverGivesItsThreadUpToALateRenewal(t *testing.T) {
	const ttl = 300 * time.Millisecond
	store := &hungRenewals{}
	r := newRig(t, rigOpts{
		mutate: func(c *bot.Config) { c.LeaseTTL = ttl },
		store:  func(st *bolt.Store) bot.Store { store.Store = st; return store },
	})
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "answer: " + req.LastUserText(), Delay: 4 * ttl}
	})
	if err := storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	thread, _ := r.mention("what should we build first", "")
	r.waitFor("the answer", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "answer: ") {
				return true
			}
		}
		return false
	})
	time.Sleep(2 * ttl) // a second call would come from a thread taken back
	if n := r.model.Calls(); n != 1 {
		t.Errorf("model calls = %d, want 1: the turn was cancelled and run again", n)
	}
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "⚠️") {
			t.Errorf("the thread shows an error: %s", text(m))
		}
	}
}
