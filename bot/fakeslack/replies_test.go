package fakeslack

import (
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// conversations.replies pages as Slack's do: the parent first, on the
// first page only, then the replies oldest first, next_cursor on every
// page but the last; oldest and latest bound the replies. A user's
// messages keep their subtype and files.
func TestConversationsRepliesPagesAndSubtypes(t *testing.T) {
	fake := New(t)
	api := fake.Client()
	root := fake.NextTS()
	fake.SendEvent(slackevents.MessageEvent{Type: "message", User: "U1", Channel: "C1", Text: "root", TimeStamp: root})
	var replies []string
	for range 5 {
		ts := fake.NextTS()
		replies = append(replies, ts)
		fake.SendEvent(slackevents.MessageEvent{Type: "message", User: "U2", Channel: "C1", Text: "r" + ts, TimeStamp: ts, ThreadTimeStamp: root})
	}
	f := fake.AddFile("notes.txt", []byte("n"))
	shared := fake.NextTS()
	fake.SendEvent(map[string]any{"type": "message", "subtype": "file_share", "user": "U3", "channel": "C1", "text": "",
		"ts": shared, "thread_ts": root, "files": []slack.File{f}})

	read := func(p slack.GetConversationRepliesParameters) (all []slack.Message, pages int) {
		t.Helper()
		p.ChannelID, p.Timestamp = "C1", root
		for {
			msgs, more, next, err := api.GetConversationReplies(&p)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			all = append(all, msgs...)
			if more != (next != "") {
				t.Fatalf("has_more %v with next_cursor %q", more, next)
			}
			if next == "" {
				return all, pages
			}
			p.Cursor = next
		}
	}
	all, pages := read(slack.GetConversationRepliesParameters{Limit: 3})
	if pages != 3 || len(all) != 7 || all[0].Timestamp != root || all[1].Timestamp != replies[0] || all[6].Timestamp != shared {
		t.Fatalf("%d pages of %d messages: %v", pages, len(all), all)
	}
	for i, m := range all[1:] {
		if m.Timestamp == root {
			t.Fatalf("the parent again at %d", i+1)
		}
	}
	last := all[6]
	if last.SubType != "file_share" || len(last.Files) != 1 || last.Files[0].Name != "notes.txt" {
		t.Fatalf("the file_share message = subtype %q, files %v", last.SubType, last.Files)
	}

	// Slack may answer fewer than the limit: a client reads on.
	fake.LimitReplies(2)
	if all, pages := read(slack.GetConversationRepliesParameters{Limit: 200}); pages != 4 || len(all) != 7 {
		t.Fatalf("capped: %d pages of %d messages", pages, len(all))
	}
	fake.LimitReplies(0)

	// The gap between replies[0] and replies[3], bounds excluded.
	gap, _ := read(slack.GetConversationRepliesParameters{Oldest: replies[0], Latest: replies[3]})
	if len(gap) != 3 || gap[0].Timestamp != root || gap[1].Timestamp != replies[1] || gap[2].Timestamp != replies[2] {
		t.Fatalf("gap = %v", gap)
	}
	incl, _ := read(slack.GetConversationRepliesParameters{Oldest: replies[0], Latest: replies[3], Inclusive: true})
	if len(incl) != 5 {
		t.Fatalf("inclusive gap has %d messages", len(incl))
	}
	if _, _, _, err := api.GetConversationReplies(&slack.GetConversationRepliesParameters{ChannelID: "C1", Timestamp: root, Cursor: "bogus"}); slackErr(err) != "invalid_cursor" {
		t.Fatalf("bad cursor: %v", err)
	}
}
