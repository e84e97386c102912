package bot

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/fakeslack"
	"agentbot/bot/lease"
	"agentbot/engine/retry"
	"agentbot/storage/bolt"
)

// A post outside the turn's reply (a greeting, a picker, a notice) under
// a thread's lease asks the fence first: a replica whose lease another
// replica took over while it was frozen (it has not noticed: its renewal
// has not run) posts nothing in the thread; with the lease, it posts.
func TestPostUnderAStaleFencePostsNothing(t *testing.T) {
	const key = "T0FAKETEAM/C1/1700000000.000100"
	fake := fakeslack.New(t)
	st, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b := &core{log: log, sleep: retry.Sleep, cfg: Config{API: slack.New(fakeslack.DefaultBotToken, slack.OptionAPIURL(fake.APIURL()))}}
	f, ok, err := st.TakeLease(context.TODO(), key, "a", time.Minute)
	if err != nil || !ok {
		t.Fatalf("take lease: %v %v", ok, err)
	}
	l := lease.Hold(context.Background(), f, lease.Config{Store: st, Fences: lease.NewFences(st), TTL: time.Minute, Replica: "a", Log: log})
	defer l.Release()
	b.post(l.Context(), "C1", "1700000000.000100", "held")
	if err := st.ReleaseLease(context.TODO(), key, "a"); err != nil { // as if it expired while a was frozen
		t.Fatal(err)
	}
	if _, ok, err := st.TakeLease(context.TODO(), key, "b", time.Minute); err != nil || !ok {
		t.Fatalf("b takes the thread over: %v %v", ok, err)
	}
	time.Sleep(300 * time.Millisecond) // past the fence check a's last call counted on
	b.post(l.Context(), "C1", "1700000000.000100", "stale")
	var texts []string
	for _, m := range fake.Messages() {
		texts = append(texts, m.Text)
	}
	if len(texts) != 1 || texts[0] != "held" {
		t.Fatalf("posted %q, want only the post made with the lease", texts)
	}
}
