package render_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/fakeslack"
	"agentbot/bot/render"
	"agentbot/engine"
)

// A reply through render.Slack and the real slack-go client, against the
// fake Slack: the stream opens in the thread for its recipient, a rate
// limit on an append is waited out as Retry-After says, the text and the
// task card reach the stream, and the stream stops with the feedback
// block; the status message of a fallback turn is replaced by the answer.
func TestSlackPosterDrivesTheWebAPI(t *testing.T) {
	fake := fakeslack.New(t)
	var waits []time.Duration
	poster := render.Slack{API: fake.Client(), Sleep: func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}}
	thread := fake.NextTS()
	th := render.Thread{Team: fake.TeamID(), Channel: "C1", TS: thread, User: "U1"}
	fake.RateLimitNext("chat.appendStream", 1, 2*time.Second)
	r := render.New(context.Background(), poster, th, render.Options{Streaming: true, Feedback: slack.NewContextBlock("feedback")})
	r.Emit(engine.Event{Kind: engine.EventText, Text: "Hello from the stream."})
	r.Emit(engine.Event{Kind: engine.EventToolStart, CallID: "c1", Status: "searching"})
	r.Finish(render.Outcome{Text: "Hello from the stream."})
	ss := fake.Streams()
	if len(ss) != 1 {
		t.Fatalf("streams = %+v", ss)
	}
	s := ss[0]
	if s.ThreadTS != thread || s.RecipientUserID != "U1" || s.RecipientTeamID != fake.TeamID() || s.TaskDisplayMode != "timeline" {
		t.Fatalf("stream opened as %+v", s)
	}
	if s.Text != "Hello from the stream." || !s.Stopped || !strings.Contains(string(s.StopBlocks), `"feedback"`) {
		t.Fatalf("stream = %+v", s)
	}
	if len(waits) != 1 || waits[0] != 2*time.Second {
		t.Fatalf("rate limit waits = %v, want [2s]", waits)
	}
	var task bool
	for _, c := range s.Chunks {
		task = task || c.Type == "task_update"
	}
	if !task {
		t.Fatalf("no task card in %+v", s.Chunks)
	}

	// Streaming off: a status message, replaced by the answer.
	fb := render.New(context.Background(), poster, th, render.Options{})
	fb.Emit(engine.Event{Kind: engine.EventToolStart, CallID: "c2", Status: "reading"})
	fb.Finish(render.Outcome{Text: "**Done** reading."})
	// The thread now holds the stream and the answer: the first turn's Stop
	// button was deleted, the second's status message became the answer.
	var got []fakeslack.Message
	for _, m := range fake.ThreadMessages("C1", thread) {
		if m.TS != s.TS {
			got = append(got, m)
		}
	}
	if len(got) != 1 || got[0].MarkdownText() != "**Done** reading." || got[0].Text != "Done reading." {
		t.Fatalf("fallback messages = %+v", got)
	}
}
