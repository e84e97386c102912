package render

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/engine"
)

func newTestReply(p Poster, opts Options) *Reply {
	opts.Streaming = true
	r := New(context.Background(), p, Thread{Team: "T1", Channel: "C1", TS: "100.1", User: "U1"}, opts)
	clock := time.Unix(1_700_000_000, 0)
	r.now = func() time.Time { return clock }
	r.sleep = func(context.Context, time.Duration) error { return nil }
	return r
}

// TestRecordOutput: the reply reports the stream it opened before it
// writes to it, and the stream closed with the whole answer at the end.
func TestRecordOutput(t *testing.T) {
	var got []Output
	r := newTestReply(newFakePoster(nil), Options{Record: func(o Output) { got = append(got, o) }})
	r.Emit(engine.Event{Kind: engine.EventText, Text: "Hello"})
	r.Finish(Outcome{Text: "Hello"})
	want := []Output{{Starting: true}, {StreamTS: "S1", Open: true}, {StreamTS: "S1"}, {StreamTS: "S1", Done: true}}
	if len(got) != len(want) {
		t.Fatalf("records %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestRecordOpenAfterFailedStop: a stream whose stopStream keeps failing
// stays recorded open, and the answer it shows is not posted again.
func TestRecordOpenAfterFailedStop(t *testing.T) {
	var last Output
	p := newFakePoster(map[string]error{"stop": err503})
	r := newTestReply(p, Options{Record: func(o Output) { last = o }})
	r.Emit(engine.Event{Kind: engine.EventText, Text: "Hello"})
	r.Finish(Outcome{Text: "Hello"})
	if last != (Output{StreamTS: "S1", Open: true}) {
		t.Fatalf("last record %+v, want the stream open", last)
	}
	stops, posts := 0, 0
	for _, c := range p.Calls() {
		stops += strings.Count(c, "stop S1")
		posts += strings.Count(c, "post ")
	}
	if stops != retryPolicy.MaxAttempts || posts != 0 {
		t.Fatalf("%d stops, %d posts: %q", stops, posts, p.Calls())
	}
}

// TestResumeClosesPriorStream: a turn resumed after its process died
// closes the stream the earlier run left open, marked interrupted, before
// it answers in a new one, and then takes the partial answer out of it; a
// prior stream Slack closed already is left.
func TestResumeClosesPriorStream(t *testing.T) {
	p := newFakePoster(nil)
	var got []Output
	r := newTestReply(p, Options{Prior: Output{StreamTS: "S0", Open: true}, Record: func(o Output) { got = append(got, o) }})
	r.Emit(engine.Event{Kind: engine.EventText, Text: "Again"})
	r.Finish(Outcome{Text: "Again"})
	calls := p.Calls()
	if len(calls) < 2 || calls[0] != "stop S0 md:_⚠️ Interrupted. The answer continues below._" || calls[1] != "start" {
		t.Fatalf("calls %q", calls)
	}
	if got[0] != (Output{StreamTS: "S0"}) || got[1] != (Output{Starting: true}) {
		t.Fatalf("first record %+v, want the prior stream closed", got[0])
	}
	// Once the whole answer is below, the cut stream loses its partial
	// text: the thread shows one answer.
	if last := calls[len(calls)-1]; !strings.HasPrefix(last, "update S0 ") || !strings.Contains(last, "The whole answer is below") {
		t.Fatalf("calls %q, want S0's partial answer replaced last", calls)
	}
	p2 := newFakePoster(map[string]error{"stop#1": errClosed})
	newTestReply(p2, Options{Prior: Output{StreamTS: "S0", Open: true}})
	if c := p2.Calls(); len(c) != 1 {
		t.Fatalf("calls %q", c)
	}
	p3 := newFakePoster(nil)
	newTestReply(p3, Options{Prior: Output{StreamTS: "S0"}}) // closed: nothing to do
	if c := p3.Calls(); len(c) != 0 {
		t.Fatalf("calls %q", c)
	}
}

// TestGuardStopsPosting: once the guard refuses (the replica lost the
// thread), the reply makes no Slack call at all, and posts no answer.
func TestGuardStopsPosting(t *testing.T) {
	p := newFakePoster(nil)
	var lost atomic.Bool
	r := newTestReply(p, Options{Guard: func() error {
		if lost.Load() {
			return errors.New("fenced")
		}
		return nil
	}})
	r.Emit(engine.Event{Kind: engine.EventText, Text: "one "})
	r.Emit(engine.Event{Kind: engine.EventToolStart, CallID: "c1", Status: "x"})
	before := len(p.Calls())
	lost.Store(true)
	r.Emit(engine.Event{Kind: engine.EventText, Text: strings.Repeat("late ", 200)})
	r.Emit(engine.Event{Kind: engine.EventToolStart, CallID: "c2", Status: "y"})
	r.Finish(Outcome{Text: "one late"})
	if got := p.Calls(); len(got) != before {
		t.Fatalf("calls after the guard refused: %q", got[before:])
	}
}

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{err503, true},
		{slack.StatusCodeError{Code: 500}, true},
		{slack.StatusCodeError{Code: 404}, false},
		{slack.SlackErrorResponse{Err: "internal_error"}, true},
		{errClosed, false},
		{context.Canceled, false},
		{errUnavailable, false},
		{errors.Join(errFenced, errors.New("x")), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestResumeAnswersInTheClosedPriorStream: the earlier run's stream was
// closed already (that run stopped it with the whole answer, then could
// not record it), and the resumed turn finds its answer stored: the answer
// replaces that stream's message instead of being posted a second time.
// A stream another turn left open (Other) is closed and never reused.
func TestResumeAnswersInTheClosedPriorStream(t *testing.T) {
	p := newFakePoster(map[string]error{"stop#1": errClosed})
	r := newTestReply(p, Options{Prior: Output{StreamTS: "S0", Open: true}})
	r.Finish(Outcome{Text: "Whole"})
	for _, c := range p.Calls() {
		if strings.HasPrefix(c, "post ") {
			t.Fatalf("the answer was posted again beside the earlier stream: %q", p.Calls())
		}
	}
	if c := p.Calls(); len(c) != 2 || !strings.HasPrefix(c[1], "update S0 ") || !strings.Contains(c[1], "Whole") {
		t.Fatalf("calls %q, want the stop, then S0 updated with the answer", c)
	}
	p2 := newFakePoster(map[string]error{"stop#1": errClosed})
	r2 := newTestReply(p2, Options{Other: "S9"})
	r2.Finish(Outcome{Text: "Mine"})
	if c := p2.Calls(); len(c) != 2 || !strings.HasPrefix(c[0], "stop S9 ") || !strings.HasPrefix(c[1], "post ") {
		t.Fatalf("calls %q, want the other stream stopped and the answer posted", c)
	}
}
