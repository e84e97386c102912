package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// A turn longer than a stream lives (Slack closes streams after about five
// minutes) goes on in a new stream message, twice here: across the stream
// messages the text is exactly the model's answer, nothing lost or
// repeated; the closed ones are settled as plain messages with their text,
// and no fallback message repeats the answer.
func TestStreamClosedTwiceRollsOver(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	var b strings.Builder
	for i := 0; b.Len() < 4000; i++ {
		b.WriteString("Part of a long answer, sentence " + string(rune('A'+i%26)) + ". ")
	}
	answer := b.String() + "THE END."
	r.slack.ExpireStreamsAfterAppends(2, 2)
	r.model.Enqueue(fakemodel.Reply{Text: answer, Chunks: 20})
	thread, _ := r.mention("explain it all", "")
	r.waitFor("the last stream to stop", func() bool {
		ss := r.slack.Streams()
		return len(ss) == 3 && ss[2].Stopped
	})
	ss := r.slack.Streams()
	var joined strings.Builder
	for i, s := range ss {
		joined.WriteString(s.Text)
		if s.ThreadTS != thread || s.Text == "" {
			t.Fatalf("stream %d = %+v", i, s)
		}
		if i < 2 {
			if !s.Expired {
				t.Fatalf("stream %d was not closed by the fake", i)
			}
			m, _ := r.slack.Message(channel, s.TS)
			if m.MarkdownText() != s.Text {
				t.Fatalf("closed stream %d shows %q, want its text %q", i, m.MarkdownText(), s.Text)
			}
		}
	}
	if joined.String() != answer {
		t.Fatalf("the streams hold %d characters, want the answer's %d:\n%q", joined.Len(), len(answer), joined.String())
	}
	if id, _ := feedbackButtons(t, ss[2].StopBlocks); id != "feedback" {
		t.Fatal("the last stream lacks the feedback buttons")
	}
	for _, m := range r.botMessages(thread)[1:] {
		if m.Kind != "stream" {
			t.Fatalf("a %s message besides the streams: %q", m.Kind, text(m))
		}
	}
}

// A stream Slack closes right after the answer's last append cannot be
// stopped; the message is settled with the whole answer and the feedback
// buttons, and nothing is posted again.
func TestStreamClosedAtTheEnd(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.slack.ExpireStreamsAfterAppends(1, 1)
	r.model.Enqueue(fakemodel.Reply{Text: "A short answer.", Chunks: 1})
	thread, _ := r.mention("quick", "")
	r.waitFor("the settled answer", func() bool {
		ss := r.slack.Streams()
		if len(ss) != 1 {
			return false
		}
		m, _ := r.slack.Message(channel, ss[0].TS)
		return m.MarkdownText() == "A short answer."
	})
	m, _ := r.slack.Message(channel, r.slack.Streams()[0].TS)
	if id, _ := feedbackButtons(t, m.Blocks); id != "feedback" {
		t.Fatalf("the settled answer lacks the feedback buttons: %s", m.Blocks)
	}
	if n := len(r.botMessages(thread)); n != 2 {
		t.Fatalf("%d bot messages, want the greeting and the answer", n)
	}
}
