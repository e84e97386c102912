package bot_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// TestThreadContextKeepsMessagesWithFiles: a thread's earlier talk, read
// when the bot is first called into it, keeps the messages that shared
// files (conversations.replies marks them file_share, with their files)
// and a reply also sent to the channel (thread_broadcast); it reads
// every page of a long thread; events (a join) stay out.
func TestThreadContextKeepsMessagesWithFiles(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.slack.LimitReplies(3) // Slack may page a thread more finely than asked
	root := r.slack.NextTS()
	send := func(ev any) { r.slack.SendEvent(ev) }
	send(slackevents.MessageEvent{Type: "message", User: "U0ANA", Channel: channel, ChannelType: "channel", Text: "Reorder idea thread.", TimeStamp: root})
	for i := range 4 {
		send(slackevents.MessageEvent{Type: "message", User: "U0BEN", Channel: channel, ChannelType: "channel",
			Text: fmt.Sprintf("point %d", i), TimeStamp: r.slack.NextTS(), ThreadTimeStamp: root})
	}
	f := r.slack.AddFile("survey.csv", []byte("rider,wants\n"))
	send(map[string]any{"type": "message", "subtype": "file_share", "user": "U0ANA", "channel": channel, "channel_type": "channel",
		"text": "Here is the rider survey.", "ts": r.slack.NextTS(), "thread_ts": root, "files": []slack.File{f}})
	send(map[string]any{"type": "message", "subtype": "thread_broadcast", "user": "U0BEN", "channel": channel, "channel_type": "channel",
		"text": "Everyone: survey is in.", "ts": r.slack.NextTS(), "thread_ts": root})
	send(map[string]any{"type": "message", "subtype": "channel_join", "user": "U0CAL", "channel": channel, "channel_type": "channel",
		"text": "<@U0CAL> has joined the channel", "ts": r.slack.NextTS(), "thread_ts": root})
	r.model.Enqueue(fakemodel.Reply{Text: "Read it."})
	r.mention("sum this thread up", root)
	r.waitCalls(1)
	context := r.model.Requests()[0].Messages[0].Content
	for _, want := range []string{"Reorder idea thread.", "point 0", "point 3", "Here is the rider survey. [shared files: survey.csv]", "Everyone: survey is in."} {
		has(t, context, want, "the thread's context")
	}
	hasNot(t, context, "has joined the channel", "the thread's context")
	if n := len(r.slack.CallsTo("conversations.replies")); n < 3 {
		t.Fatalf("conversations.replies called %d times for a thread of 9 messages in pages of 3", n)
	}
}
