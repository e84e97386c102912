package render

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/engine"
)

// errClosed is Slack's answer to an append to a stream it closed (it does
// after about five minutes): the real error code, as bot/fakeslack sends
// it too.
var errClosed = slack.SlackErrorResponse{Err: "message_not_in_streaming_state"}

// stopNote is what the thread reads after U2 stopped the turn.
const stopNote = "⏹ Stopped by <@U2>. What was said so far is kept; write to continue."

// errUnavailable is any other failure of a call.
var errUnavailable = errors.New("slack: request refused")

// err503 is slack-go's error for an HTTP 503 answer: a passing failure,
// tried again.
var err503 = slack.StatusCodeError{Code: 503, Status: "503 Service Unavailable"}

// fakePoster records the calls a reply makes, one line each, and fails the
// ones its test names: "append#2" fails the second append, "start" every
// start.
type fakePoster struct {
	mu    sync.Mutex
	calls []string
	n     map[string]int
	fail  map[string]error
}

func newFakePoster(fail map[string]error) *fakePoster {
	return &fakePoster{n: map[string]int{}, fail: fail}
}

// do records call as the next call of method and returns its fault.
func (f *fakePoster) do(method, call string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n[method]++
	n := f.n[method]
	if err, ok := f.fail[fmt.Sprintf("%s#%d", method, n)]; ok {
		f.calls = append(f.calls, call+" → "+err.Error())
		return n, err
	}
	if err, ok := f.fail[method]; ok {
		f.calls = append(f.calls, call+" → "+err.Error())
		return n, err
	}
	f.calls = append(f.calls, call)
	return n, nil
}

func (f *fakePoster) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakePoster) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// short shows text in a call line: whitespace collapsed, long text as its
// start and length.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		return fmt.Sprintf("%s…(%d)", string(r[:12]), len(r))
	}
	return s
}

// message shows m: its markdown block's text if it has one, else its
// text, and how many blocks it has.
func message(m Message) string {
	line := short(m.Text)
	if len(m.Blocks) > 0 {
		if md, ok := m.Blocks[0].(*slack.MarkdownBlock); ok {
			line = "md:" + short(md.Text)
		}
	}
	switch {
	case m.Blocks == nil:
	case len(m.Blocks) == 0:
		line += " [clear]"
	default:
		line += fmt.Sprintf(" [%d]", len(m.Blocks))
	}
	return line
}

func chunk(c Chunk) string {
	var parts []string
	if c.Markdown != "" {
		parts = append(parts, "md:"+short(c.Markdown))
	}
	if c.Task != nil {
		parts = append(parts, fmt.Sprintf("task:%s/%s", c.Task.ID, c.Task.Status))
	}
	if len(c.Blocks) > 0 {
		parts = append(parts, fmt.Sprintf("[%d]", len(c.Blocks)))
	}
	return strings.Join(parts, " ")
}

func (f *fakePoster) Post(_ context.Context, _, thread string, m Message) (string, error) {
	n, err := f.do("post", "post "+message(m))
	return fmt.Sprintf("M%d", n), err
}

func (f *fakePoster) Update(_ context.Context, _, ts string, m Message) error {
	_, err := f.do("update", "update "+ts+" "+message(m))
	return err
}

func (f *fakePoster) Delete(_ context.Context, _, ts string) error {
	_, err := f.do("delete", "delete "+ts)
	return err
}

func (f *fakePoster) StartStream(_ context.Context, t Thread) (string, error) {
	n, err := f.do("start", "start")
	return fmt.Sprintf("S%d", n), err
}

func (f *fakePoster) AppendStream(_ context.Context, _, ts string, c Chunk) error {
	_, err := f.do("append", strings.TrimSpace("append "+ts+" "+chunk(c)))
	return err
}

func (f *fakePoster) StopStream(_ context.Context, _, ts string, c Chunk) error {
	_, err := f.do("stop", strings.TrimSpace("stop "+ts+" "+chunk(c)))
	return err
}

func (f *fakePoster) SetStatus(_ context.Context, _, _, status string) error {
	_, err := f.do("status", strings.TrimSpace("status "+short(status)))
	return err
}

// step is one thing that happens during a turn.
type step func(r *Reply, stop *stopFlag)

type stopFlag struct{ by bool }

func text(s string) step {
	return func(r *Reply, _ *stopFlag) { r.Emit(engine.Event{Kind: engine.EventText, Text: s}) }
}

func toolStart(id, status string) step {
	return func(r *Reply, _ *stopFlag) {
		r.Emit(engine.Event{Kind: engine.EventToolStart, CallID: id, Status: status})
	}
}

func toolEnd(id, errText string) step {
	return func(r *Reply, _ *stopFlag) {
		r.Emit(engine.Event{Kind: engine.EventToolEnd, CallID: id, Err: errText})
	}
}

func notice(s string) step {
	return func(r *Reply, _ *stopFlag) { r.Emit(engine.Event{Kind: engine.EventNotice, Text: s}) }
}

func saved(path string, version int) step {
	return func(r *Reply, _ *stopFlag) {
		r.Emit(engine.Event{Kind: engine.EventOutput, Output: &engine.Output{Path: path, Version: version}})
	}
}

// stopIt is someone pressing Stop.
func stopIt(r *Reply, s *stopFlag) { s.by = true }

func TestNext(t *testing.T) {
	changes := []change{opened, closed, refused, overflowed, stopped, finished}
	want := map[mode][6]mode{
		//              opened          closed          refused       overflowed      stopped      finished
		modeStart:      {modeStreaming, modeStart, modeFallback, modeOverflowed, modeStopped, modeDone},
		modeStreaming:  {modeStreaming, modeStart, modeFallback, modeOverflowed, modeStopped, modeDone},
		modeOverflowed: {modeOverflowed, modeOverflowed, modeFallback, modeOverflowed, modeStopped, modeDone},
		modeFallback:   {modeFallback, modeFallback, modeFallback, modeFallback, modeStopped, modeDone},
		modeStopped:    {modeStopped, modeStopped, modeStopped, modeStopped, modeStopped, modeDone},
		modeDone:       {modeDone, modeDone, modeDone, modeDone, modeDone, modeDone},
	}
	for m, row := range want {
		for i, c := range changes {
			if got := next(m, c); got != row[i] {
				t.Errorf("next(%s, change %d) = %s, want %s", m, c, got, row[i])
			}
		}
	}
}

// TestReply plays turns against a fake Slack and checks the calls the
// reply makes, in order, and the mode it is in when the turn ends.
func TestReply(t *testing.T) {
	long := func(c string, n int) string { return strings.Repeat(c, n) }
	cases := []struct {
		name      string
		fallback  bool // streaming off
		dm        bool
		fail      map[string]error
		steps     []step
		outcome   Outcome
		wantMode  mode // before Finish
		wantCalls []string
	}{
		{
			name:      "the whole answer streams; the stream closes with the feedback buttons",
			steps:     []step{text("Hello"), text(" world")},
			outcome:   Outcome{Text: "Hello world"},
			wantMode:  modeStreaming,
			wantCalls: []string{"start", "append S1 md:Hello", "append S1 md:world", "stop S1 [1]"},
		},
		{
			name:     "tool calls show as task cards, with a Stop button beside the stream that goes at the end",
			steps:    []step{toolStart("c1", "searching"), toolEnd("c1", ""), text("Found it")},
			outcome:  Outcome{Text: "Found it"},
			wantMode: modeStreaming,
			wantCalls: []string{"start", "append S1 task:c1/in_progress", "post ⏳ Working… [2]",
				"append S1 task:c1/complete", "append S1 md:Found it", "stop S1 [1]", "delete M1"},
		},
		{
			name:     "in a DM the thread status shows the tool and is cleared at the end; no Stop button",
			dm:       true,
			steps:    []step{toolStart("c1", "searching"), text("ok")},
			outcome:  Outcome{Text: "ok"},
			wantMode: modeStreaming,
			wantCalls: []string{"start", "append S1 task:c1/in_progress", "status searching", "status",
				"append S1 md:ok", "stop S1 [1]"},
		},
		{
			name:      "a refused stream falls back to a status message, which the answer replaces",
			fail:      map[string]error{"start": errUnavailable},
			steps:     []step{toolStart("c1", "reading x"), text("Answer")},
			outcome:   Outcome{Text: "Answer"},
			wantMode:  modeFallback,
			wantCalls: []string{"start → " + errUnavailable.Error(), "post ⏳ reading x… [2]", "update M1 md:Answer [2]"},
		},
		{
			name:     "an append that fails falls back; the answer replaces the stream message",
			fail:     map[string]error{"append#2": errUnavailable},
			steps:    []step{text("Part one. "), text(long("b", flushChars))},
			outcome:  Outcome{Text: "Part one. " + long("b", flushChars)},
			wantMode: modeFallback,
			wantCalls: []string{"start", "append S1 md:Part one.", "append S1 md:bbbbbbbbbbbb…(400) → " + errUnavailable.Error(),
				"update S1 md:Part one. bb…(410) [2]"},
		},
		{
			name:     "an answer too long for one stream overflows: the stream closes and the split answer replaces it",
			steps:    []step{text(long("a", 5000)), text(long("b", 5000)), text(long("c", 3000))},
			outcome:  Outcome{Text: long("a", 5000) + long("b", 5000) + long("c", 3000)},
			wantMode: modeOverflowed,
			wantCalls: []string{"start", "append S1 md:aaaaaaaaaaaa…(5000)", "stop S1",
				"update S1 md:aaaaaaaaaaaa…(10000) [1]", "post md:cccccccccccc…(3000) [2]"},
		},
		{
			name:      "an overflow before any stream posts the split answer",
			steps:     []step{text(long("a", streamTextLimit+1))},
			outcome:   Outcome{Text: long("a", streamTextLimit+1)},
			wantMode:  modeOverflowed,
			wantCalls: []string{"post md:aaaaaaaaaaaa…(9001) [2]"},
		},
		{
			name:     "a stream Slack closes rolls over: the closed one is settled, the rest goes on in a new one",
			fail:     map[string]error{"append#2": errClosed},
			steps:    []step{text("one "), text(long("t", flushChars))},
			outcome:  Outcome{Text: "one " + long("t", flushChars)},
			wantMode: modeStreaming,
			wantCalls: []string{"start", "append S1 md:one", "append S1 md:tttttttttttt…(400) → " + errClosed.Error(),
				"update S1 md:one [1]", "start", "append S2 md:tttttttttttt…(400)", "stop S2 [1]"},
		},
		{
			name:     "after a rollover and a refusal only the text no stream shows is posted",
			fail:     map[string]error{"append#2": errClosed, "start#2": errUnavailable},
			steps:    []step{text("one "), text(long("t", flushChars))},
			outcome:  Outcome{Text: "one " + long("t", flushChars)},
			wantMode: modeFallback,
			wantCalls: []string{"start", "append S1 md:one", "append S1 md:tttttttttttt…(400) → " + errClosed.Error(),
				"update S1 md:one [1]", "start → " + errUnavailable.Error(), "post md:tttttttttttt…(400) [2]"},
		},
		{
			name:      "a stream closed after the last append is settled with the tail",
			fail:      map[string]error{"stop": errClosed},
			steps:     []step{text("Hi")},
			outcome:   Outcome{Text: "Hi"},
			wantMode:  modeStreaming,
			wantCalls: []string{"start", "append S1 md:Hi", "stop S1 [1] → " + errClosed.Error(), "update S1 md:Hi [2]"},
		},
		{
			name:      "a stopStream that fails otherwise does not post the answer the stream shows",
			fail:      map[string]error{"stop": errUnavailable},
			steps:     []step{text("Hi")},
			outcome:   Outcome{Text: "Hi"},
			wantMode:  modeStreaming,
			wantCalls: []string{"start", "append S1 md:Hi", "stop S1 [1] → " + errUnavailable.Error()},
		},
		{
			name:     "a stopStream answering 503 is tried again until it closes; the answer is not posted again",
			fail:     map[string]error{"stop#1": err503, "stop#2": err503},
			steps:    []step{text("Hi")},
			outcome:  Outcome{Text: "Hi"},
			wantMode: modeStreaming,
			wantCalls: []string{"start", "append S1 md:Hi", "stop S1 [1] → " + err503.Error(), "stop S1 [1] → " + err503.Error(),
				"stop S1 [1]"},
		},
		{
			name:     "a settle after a closed stream answering 503 is tried again",
			fail:     map[string]error{"stop": errClosed, "update#1": err503},
			steps:    []step{text("Hi")},
			outcome:  Outcome{Text: "Hi"},
			wantMode: modeStreaming,
			wantCalls: []string{"start", "append S1 md:Hi", "stop S1 [1] → " + errClosed.Error(), "update S1 md:Hi [2] → " + err503.Error(),
				"update S1 md:Hi [2]"},
		},
		{
			name:      "a failure after streaming closes the stream and is posted below it",
			steps:     []step{text("Partial")},
			outcome:   Outcome{Text: "Partial", Failure: "boom"},
			wantMode:  modeStreaming,
			wantCalls: []string{"start", "append S1 md:Partial", "stop S1", "post md:⚠️ boom [1]"},
		},
		{
			name:      "a failure without streaming is posted after the text nobody saw",
			fallback:  true,
			steps:     []step{text("Draft")},
			outcome:   Outcome{Text: "Draft", Failure: "boom"},
			wantMode:  modeFallback,
			wantCalls: []string{"post md:Draft ⚠️ boom [1]"},
		},
		{
			name:      "notices come before an answer that did not stream",
			fallback:  true,
			steps:     []step{notice("budget low"), text("Answer")},
			outcome:   Outcome{Text: "Answer"},
			wantMode:  modeFallback,
			wantCalls: []string{"post md:_budget low_ Answer [2]"},
		},
		{
			name:      "a fallback turn waiting for approvals says so in its status message",
			fallback:  true,
			steps:     []step{toolStart("c1", "x")},
			outcome:   Outcome{Waiting: 2},
			wantMode:  modeFallback,
			wantCalls: []string{"post ⏳ x… [2]", "update M1 ⏸ Waiting for approval of 2 tool calls (below). [clear]"},
		},
		{
			name:      "a streamed turn waiting for approvals closes the stream with the note",
			steps:     []step{toolStart("c1", "x")},
			outcome:   Outcome{Waiting: 1},
			wantMode:  modeStreaming,
			wantCalls: []string{"start", "append S1 task:c1/in_progress", "post ⏳ Working… [2]", "stop S1 [1]", "delete M1"},
		},
		{
			name:     "a stopped stream keeps what was said, with the text not yet shown; the late answer never comes",
			steps:    []step{text("said "), text("more"), stopIt, text("LATE"), toolStart("c9", "late")},
			outcome:  Outcome{Text: "said more LATE", StoppedBy: "U2"},
			wantMode: modeStopped,
			wantCalls: []string{"start", "append S1 md:said", "stop S1 md:more",
				"post " + stopNote},
		},
		{
			name:      "a stopped fallback turn says so in its status message",
			fallback:  true,
			steps:     []step{toolStart("c1", "x"), stopIt, toolStart("c2", "late")},
			outcome:   Outcome{Text: "late", StoppedBy: "U2"},
			wantMode:  modeStopped,
			wantCalls: []string{"post ⏳ x… [2]", "update M1 " + stopNote + " [clear]"},
		},
		{
			name:     "a stop beside a stream turns the Stop button message into the note",
			steps:    []step{toolStart("c1", "x"), stopIt}, // learned at Finish
			outcome:  Outcome{StoppedBy: "U2"},
			wantMode: modeStreaming,
			wantCalls: []string{"start", "append S1 task:c1/in_progress", "post ⏳ Working… [2]", "stop S1",
				"update M1 " + stopNote + " [clear]"},
		},
		{
			name:      "an overflowed stopped turn adds nothing to its stream",
			steps:     []step{text(long("a", 5000)), text(long("b", 5000)), stopIt, text("late")},
			outcome:   Outcome{StoppedBy: "U2"},
			wantMode:  modeStopped,
			wantCalls: []string{"start", "append S1 md:aaaaaaaaaaaa…(5000)", "stop S1", "post " + stopNote},
		},
		{
			name:     "an overflowed answer stopped after a rollover adds nothing to the new stream",
			fail:     map[string]error{"append#2": errClosed},
			steps:    []step{text(long("a", 5000)), text(long("b", 5000)), toolStart("c1", "x"), stopIt, text("late")},
			outcome:  Outcome{StoppedBy: "U2"},
			wantMode: modeStopped,
			wantCalls: []string{"start", "append S1 md:aaaaaaaaaaaa…(5000)", "append S1 task:c1/in_progress → " + errClosed.Error(),
				"update S1 md:aaaaaaaaaaaa…(5000) [1]", "start", "append S2 task:c1/in_progress", "post ⏳ Working… [2]", "stop S2",
				"update M1 " + stopNote + " [clear]"},
		},
		{
			name:     "documents are uploaded once each, latest version, before the answer; also after a stop",
			steps:    []step{saved("a.md", 1), text("Hi"), saved("b.md", 1), stopIt, text("late"), saved("a.md", 2)},
			outcome:  Outcome{StoppedBy: "U2"},
			wantMode: modeStopped,
			wantCalls: []string{"start", "append S1 md:Hi", "upload a.md v2", "upload b.md v1", "stop S1",
				"post " + stopNote},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newFakePoster(tc.fail)
			var stop stopFlag
			feedback := slack.NewContextBlock("feedback")
			r := New(context.Background(), p, Thread{Team: "T1", Channel: "C1", TS: "100.1", User: "U1", DM: tc.dm}, Options{
				Streaming: !tc.fallback,
				Feedback:  feedback,
				Stopped:   func() bool { return stop.by },
				Upload: func(ev engine.Event) {
					p.record(fmt.Sprintf("upload %s v%d", ev.Output.Path, ev.Output.Version))
				},
			})
			clock := time.Unix(1_700_000_000, 0)
			r.now = func() time.Time { return clock } // no flush by time
			r.sleep = func(context.Context, time.Duration) error { return nil }
			for _, s := range tc.steps {
				s(r, &stop)
			}
			if r.mode != tc.wantMode {
				t.Errorf("mode before finish = %s, want %s", r.mode, tc.wantMode)
			}
			r.Finish(tc.outcome)
			if r.mode != modeDone {
				t.Errorf("mode after finish = %s, want done", r.mode)
			}
			got := p.Calls()
			if strings.Join(got, "\n") != strings.Join(tc.wantCalls, "\n") {
				t.Errorf("calls:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.wantCalls, "\n  "))
			}
			// Finish runs once, and nothing shows after it.
			r.Emit(engine.Event{Kind: engine.EventText, Text: "after"})
			r.Finish(tc.outcome)
			if n := len(p.Calls()); n != len(got) {
				t.Errorf("%d calls after Finish: %q", n-len(got), p.Calls()[len(got):])
			}
		})
	}
}

// TestCallWaitsOutRateLimits checks the retry every Slack call goes
// through: Slack's 429 carries Retry-After (slack-go's RateLimitedError),
// which is waited out, at most MaxRateLimitRetries times.
func TestCallWaitsOutRateLimits(t *testing.T) {
	cases := []struct {
		name      string
		errs      []error
		wantCalls int
		wantWaits []time.Duration
		wantErr   bool
	}{
		{"success", []error{nil}, 1, nil, false},
		{"another error is returned at once", []error{errUnavailable}, 1, nil, true},
		{"Retry-After is waited out", []error{&slack.RateLimitedError{RetryAfter: 3 * time.Second}, nil}, 2, []time.Duration{3 * time.Second}, false},
		{"no Retry-After waits a second", []error{&slack.RateLimitedError{}, nil}, 2, []time.Duration{time.Second}, false},
		{"gives up after the retries", nil, MaxRateLimitRetries + 1, []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var waits []time.Duration
			s := Slack{Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			calls := 0
			err := s.Call(context.Background(), func() error {
				calls++
				if calls <= len(tc.errs) {
					return tc.errs[calls-1]
				}
				if tc.errs == nil {
					return &slack.RateLimitedError{RetryAfter: time.Second}
				}
				return nil
			})
			if calls != tc.wantCalls || fmt.Sprint(waits) != fmt.Sprint(tc.wantWaits) || (err != nil) != tc.wantErr {
				t.Fatalf("calls %d, waits %v, err %v; want %d, %v, error %v", calls, waits, err, tc.wantCalls, tc.wantWaits, tc.wantErr)
			}
		})
	}
	// A wait cut short by the context ends the call with its error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Slack{}.Call(ctx, func() error { return &slack.RateLimitedError{RetryAfter: time.Hour} })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait returned %v", err)
	}
}
