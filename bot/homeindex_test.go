package bot_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/bot"
	"agentbot/bot/threadstate"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// viewStore is the bolt store a Home tab test wires into the bot: it
// counts the reads of whole sessions and of the list of every session,
// and can hold the person index's reads until released.
type viewStore struct {
	*bolt.Store
	whole atomic.Int64 // FindSession, SessionByID and ListSessions calls
	hold  chan struct{}
}

func (s *viewStore) FindSession(ctx context.Context, key string) (*transcript.Session, error) {
	s.whole.Add(1)
	return s.Store.FindSession(ctx, key)
}

func (s *viewStore) SessionByID(ctx context.Context, id string) (*transcript.Session, error) {
	s.whole.Add(1)
	return s.Store.SessionByID(ctx, id)
}

func (s *viewStore) ListSessions(ctx context.Context) ([]storage.SessionInfo, error) {
	s.whole.Add(1)
	return s.Store.ListSessions(ctx)
}

func (s *viewStore) PersonSessions(ctx context.Context, person string, limit int) ([]storage.SessionRef, error) {
	if s.hold != nil {
		<-s.hold
	}
	return s.Store.PersonSessions(ctx, person, limit)
}

// seeded numbers the seeded sessions' threads.
var seeded atomic.Int64

// seedSessions stores n sessions of channel threads owned by owner, each
// with a transcript and a document, and returns their keys.
func seedSessions(tb testing.TB, st *bolt.Store, team, owner string, n int) []string {
	tb.Helper()
	ctx := context.Background()
	var keys []string
	for i := range n {
		key := fmt.Sprintf("%s/%s/1700000000.%06d", team, channel, seeded.Add(1))
		s, err := st.NewSession(ctx, key)
		if err != nil {
			tb.Fatal(err)
		}
		s.AgentID, s.Owner = "product-lead", owner
		threadstate.Put(s, threadstate.State{Owner: owner})
		s.Agent = &transcript.AgentSnapshot{ID: "product-lead", Name: "Maren", Icon: "🧭"}
		s.Messages = []transcript.Message{{Role: transcript.RoleSystem, Content: strings.Repeat("persona ", 200)},
			{Role: transcript.RoleUser, Content: "write the prd"}, {Role: transcript.RoleAssistant, Content: "Done."}}
		s.Outputs = []transcript.Output{{Path: fmt.Sprintf("doc-%s-%d.md", owner, i), Version: 1}}
		if err := st.SaveSession(ctx, s); err != nil {
			tb.Fatal(err)
		}
		keys = append(keys, key)
	}
	return keys
}

// TestHomeTabReadsTheIndexNotTranscripts: the Home tab finds a person's
// sessions in the store's person index and reads only their metadata,
// never a transcript nor the list of every session; it is built beside
// the intake, so a message sent while it is being built is acked and
// answered before it is published.
func TestHomeTabReadsTheIndexNotTranscripts(t *testing.T) {
	vs := &viewStore{}
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) {
		vs.Store = c.Store.(*bolt.Store)
		c.Store = vs
	}})
	team := r.slack.TeamID()
	seedSessions(t, r.st, team, "U0OTHER", 40)
	mine := seedSessions(t, r.st, team, user, 3)
	r.slack.SetMembers(channel, user, "U0OTHER")
	before := vs.whole.Load()
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"})
	r.waitFor("the home tab", func() bool { return strings.Contains(lastHome(r, user), "doc-"+user) })
	home := lastHome(r, user)
	for i := range mine {
		has(t, home, fmt.Sprintf("doc-%s-%d.md (v1)", user, i), "the home tab")
	}
	hasNot(t, home, "doc-U0OTHER", "the home tab")
	if n := vs.whole.Load() - before; n != 0 {
		t.Fatalf("the home tab read %d whole sessions or session lists", n)
	}

	// A Home tab held in the store does not hold the workspace's events.
	vs.hold = make(chan struct{})
	publishes := len(r.slack.CallsTo("views.publish"))
	homeEnv := r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": "U0NEW", "tab": "home"})
	if _, err := r.slack.WaitAck(homeEnv, 5*time.Second); err != nil {
		t.Fatalf("the app_home_opened event: %v", err)
	}
	storage.SetChannelDefault(context.Background(), r.st, team, "C0ELSE", "product-lead")
	ts := r.slack.NextTS()
	env := r.slack.SendEvent(map[string]any{"type": "app_mention", "user": user, "channel": "C0ELSE", "ts": ts,
		"text": "<@" + r.slack.BotUserID() + "> hello"})
	if _, err := r.slack.WaitAck(env, 5*time.Second); err != nil {
		t.Fatalf("a message while a home tab is built: %v", err)
	}
	r.waitFor("the greeting", func() bool { return len(r.slack.ThreadMessages("C0ELSE", ts)) > 1 })
	if n := len(r.slack.CallsTo("views.publish")); n != publishes {
		t.Fatalf("%d home tabs published while the index was held", n-publishes)
	}
	close(vs.hold)
	r.waitFor("the held home tab", func() bool { return lastHome(r, "U0NEW") != "" })
}
