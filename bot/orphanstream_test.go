package bot_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// TestStreamOfACutTurnClosedByTheItemThatGoesFirst: a process died with a
// turn's stream open (its record names the stream, for that turn's item),
// and another item, one that came late, goes first on restart: its turn
// closes that stream, since its own record replaces the one naming it.
func TestStreamOfACutTurnClosedByTheItemThatGoesFirst(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "first answer"})
	thread, _ := r.mention("q0", "")
	r.waitFor("the first answer", func() bool { return r.model.Calls() == 1 && len(r.botMessages(thread)) >= 2 })
	r.shutdown()

	// What the dead process left: a stream open in the thread, recorded
	// for its item (seq 9999), whose turn never finished.
	_, open, err := r.slack.Client().StartStreamContext(context.Background(), channel, slack.MsgOptionTS(thread),
		slack.MsgOptionMarkdownText("a partial answ"), slack.MsgOptionRecipientUserID(user), slack.MsgOptionRecipientTeamID(r.slack.TeamID()))
	if err != nil {
		t.Fatal(err)
	}
	r.start()
	key := r.slack.TeamID() + "/" + channel + "/" + thread
	s, err := r.st.FindSession(ctx, key)
	if err != nil || s == nil {
		t.Fatalf("session %s: %v", key, err)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(s.Meta["bot.thread"]), &st); err != nil {
		t.Fatal(err)
	}
	st["output"] = map[string]any{"seq": 9999, "stream": open, "open": true}
	raw, _ := json.Marshal(st)
	s.SetMeta("bot.thread", string(raw))
	if err := r.st.SaveSession(ctx, s); err != nil {
		t.Fatal(err)
	}

	r.model.Enqueue(fakemodel.Reply{Text: "second answer"})
	r.reply("q-late", thread)
	r.waitFor("the stream left open closed", func() bool {
		for _, x := range r.slack.Streams() {
			if x.TS == open {
				return x.Stopped || x.Expired
			}
		}
		return false
	})
	for _, x := range r.slack.Streams() {
		if x.TS == open && !strings.Contains(x.Text, "Interrupted") {
			t.Fatalf("the stream left open was closed without the interrupted note: %q", x.Text)
		}
	}
}
