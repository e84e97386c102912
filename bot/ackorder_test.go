package bot_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/storage"
)

// failingStore refuses admissions while fail is set and records when each
// admission call returned.
type failingStore struct {
	bot.Store
	mu       sync.Mutex
	fail     bool
	admitted []time.Time
}

func (f *failingStore) Admit(ctx context.Context, order int64, d []string, ttl time.Duration, key string, payload []byte) (<-chan error, <-chan storage.Admission) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		ch := make(chan storage.Admission, 1)
		ch <- storage.Admission{Err: errors.New("disk full")}
		return nil, ch
	}
	_, ch := f.Store.Admit(ctx, order, d, ttl, key, payload) // as a store without a journal
	f.admitted = append(f.admitted, time.Now())
	return nil, ch
}

// A message is acked only once it is persisted; one that cannot be
// persisted is not acked, so Slack delivers it again, and then it runs.
func TestAckAfterPersistence(t *testing.T) {
	ctx := context.Background()
	var fs *failingStore
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		fs = &failingStore{Store: c.Store, fail: true}
		c.Store = fs
	}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	_, env := r.mention("", "")
	if _, err := r.slack.WaitAck(env, 700*time.Millisecond); err == nil {
		t.Fatal("a message that could not be persisted was acked")
	}
	fs.mu.Lock()
	fs.fail = false
	fs.mu.Unlock()
	thread, env2 := r.mention("", "")
	if _, err := r.slack.WaitAck(env2, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	acked := time.Now()
	fs.mu.Lock()
	n, first := len(fs.admitted), time.Time{}
	if n > 0 {
		first = fs.admitted[0]
	}
	fs.mu.Unlock()
	if n != 1 || first.After(acked) {
		t.Fatalf("%d admissions; the first at %v, the ack seen at %v", n, first, acked)
	}
	r.waitBotMessages(thread, 1) // and it runs: the greeting
}
