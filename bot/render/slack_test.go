package render_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
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
	r := render.New(context.Background(), poster, th, render.Options{Streaming: true, Feedback: slack.NewContextBlock("feedback",
		slack.NewTextBlockObject(slack.MarkdownType, "Was this helpful?", false, false))}) // a context block holds at least one element
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

// A message's text is escaped for Slack on its way out (only mentions stay
// markup); blocks Slack refuses are logged at warn with the method and
// the block path, and the thread gets the message as plain text instead.
func TestSlackPosterEscapesAndFallsBackToPlainText(t *testing.T) {
	fake := fakeslack.New(t)
	fake.AllowViolations() // the refused blocks below are on purpose
	var logs bytes.Buffer
	poster := render.Slack{API: fake.Client(), Log: slog.New(slog.NewTextHandler(&logs, nil))}
	thread := fake.NextTS()
	if _, err := poster.Post(context.Background(), "C1", thread, render.Message{Text: "Map<String> & <!channel>, ask <@U1>"}); err != nil {
		t.Fatal(err)
	}
	msgs := fake.ThreadMessages("C1", thread)
	if len(msgs) != 1 || msgs[0].Text != "Map&lt;String&gt; &amp; &lt;!channel&gt;, ask <@U1>" {
		t.Fatalf("text sent as %+v", msgs)
	}
	long := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("x", 3001), false, false), nil, nil)
	ts, err := poster.Post(context.Background(), "C1", thread, render.Message{Text: "short", Plain: "the whole answer", Blocks: []slack.Block{long}})
	if err != nil || ts == "" {
		t.Fatalf("post with refused blocks: ts %q, err %v", ts, err)
	}
	last := fake.ThreadMessages("C1", thread)[1]
	if last.Text != "the whole answer" || len(last.BlockTypes()) != 0 {
		t.Fatalf("plain-text fallback = %+v", last)
	}
	out := logs.String()
	for _, want := range []string{"level=WARN", "method=chat.postMessage", "error=invalid_blocks", "json-pointer:/blocks/0/text/text"} {
		if !strings.Contains(out, want) {
			t.Fatalf("log lacks %q:\n%s", want, out)
		}
	}
	if v := fake.Violations(); len(v) != 1 || v[0].Error != "invalid_blocks" {
		t.Fatalf("violations = %v", v)
	}
	if !render.PayloadRefused(slack.SlackErrorResponse{Err: "msg_blocks_too_long"}) || render.PayloadRefused(slack.SlackErrorResponse{Err: "channel_not_found"}) {
		t.Fatal("PayloadRefused misreads Slack's errors")
	}
}

// A tool's status shown in a channel thread's status message (a context
// block, mrkdwn) is escaped: Slack accepts it and shows the name as is.
func TestStatusMessageIsEscaped(t *testing.T) {
	fake := fakeslack.New(t) // fails the test if Slack's rules refuse a payload
	poster := render.Slack{API: fake.Client()}
	thread := fake.NextTS()
	r := render.New(context.Background(), poster, render.Thread{Team: fake.TeamID(), Channel: "C1", TS: thread, User: "U1"}, render.Options{})
	r.Emit(engine.Event{Kind: engine.EventToolStart, CallID: "c1", Status: "reading R&D <draft>.md"})
	var status string
	for _, c := range fake.CallsTo("chat.postMessage") {
		status += c.Form.Get("blocks")
	}
	if !strings.Contains(status, "R\u0026amp;D \u0026lt;draft\u0026gt;.md") && !strings.Contains(status, `R\u0026amp;D \u0026lt;draft\u0026gt;.md`) {
		t.Fatalf("status blocks = %s", status)
	}
	r.Finish(render.Outcome{Text: "Read it."})
	if v := fake.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}

// cutInFlight is a transport whose call of method reaches Slack, and is
// then cut by cancel before its answer arrives: the lease's context ending
// while the call is in flight. As net/http does, a call whose context
// ended gets its context's error instead of the answer.
type cutInFlight struct {
	method string
	cancel context.CancelFunc
}

func (c cutInFlight) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.URL.Path, "/"+c.method) {
		return resp, err
	}
	c.cancel()
	if err := req.Context().Err(); err != nil {
		resp.Body.Close()
		return nil, err
	}
	return resp, nil
}

// A call the guard let through runs to its end when the thread's lease
// ends meanwhile: Slack took the answer, so the reply knows it posted it
// and records it done. A call cut in flight would leave it posted and
// unrecorded, and a replay of the turn would post it a second time.
func TestGuardedCallRunsToItsEnd(t *testing.T) {
	fake := fakeslack.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	poster := render.Slack{API: fake.Client(slack.OptionHTTPClient(&http.Client{Transport: cutInFlight{"chat.postMessage", cancel}}))}
	thread := fake.NextTS()
	var last render.Output
	r := render.New(ctx, poster, render.Thread{Team: fake.TeamID(), Channel: "C1", TS: thread, User: "U1"},
		render.Options{Guard: func() error { return nil }, Record: func(o render.Output) { last = o }})
	r.Finish(render.Outcome{Text: "The whole answer."})
	var posted int
	for _, m := range fake.ThreadMessages("C1", thread) {
		if strings.Contains(m.Text, "The whole answer.") {
			posted++
		}
	}
	if posted != 1 {
		t.Fatalf("the answer is in the thread %d times, want 1", posted)
	}
	if !last.Done || last.AnswerTS == "" {
		t.Errorf("the posted answer is not recorded done: %+v", last)
	}
}
