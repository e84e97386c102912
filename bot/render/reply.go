package render

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine"
	"agentbot/engine/retry"
)

const (
	// streamTextLimit is how much text one streamed message holds; a longer
	// answer is posted as split markdown messages instead.
	streamTextLimit = 9000
	// flushEvery and flushChars pace appendStream calls.
	flushEvery = 600 * time.Millisecond
	flushChars = 400
	// maxRollovers bounds how often one turn continues in a new stream
	// after Slack closed the previous one (about every five minutes).
	maxRollovers = 50
)

// mode is what a reply shows the turn with.
type mode uint8

const (
	// modeStart: no stream is open; the next text or tool call opens one.
	// A reply is here before its first stream, and for a moment after
	// Slack closed one (it rolled over into a new stream message).
	modeStart mode = iota
	// modeStreaming: a stream is open and holds the answer so far.
	modeStreaming
	// modeOverflowed: the answer outgrew what one stream holds. Text waits
	// for the final answer, posted as split messages in place of the
	// stream; a stream may still show tool calls.
	modeOverflowed
	// modeFallback: streaming is off, or Slack refused it. A status
	// message shows progress, and the answer replaces it at the end.
	modeFallback
	// modeStopped: someone stopped the turn. Nothing more is shown and its
	// late answer is never posted.
	modeStopped
	// modeDone: Finish ran.
	modeDone
)

var modeNames = [...]string{"start", "streaming", "overflowed", "fallback", "stopped", "done"}

func (m mode) String() string { return modeNames[m] }

// streamsText reports whether answer text goes to a stream in mode m, as
// it is written.
func (m mode) streamsText() bool { return m == modeStart || m == modeStreaming }

// change is what moves a reply from one mode to another.
type change uint8

const (
	opened     change = iota // a stream opened
	closed                   // Slack closed the open stream: roll over
	refused                  // Slack refused to open or append to a stream
	overflowed               // the answer outgrew one stream
	stopped                  // someone stopped the turn
	finished                 // the turn ended
)

// next is the transition function: the mode a reply in mode m goes to on
// c. Done and stopped are final but for finishing; the fallback stays
// until then; an overflowed answer stays overflowed through new streams.
func next(m mode, c change) mode {
	switch {
	case m == modeDone || c == finished:
		return modeDone
	case m == modeStopped || c == stopped:
		return modeStopped
	case m == modeFallback || c == refused:
		return modeFallback
	case m == modeOverflowed || c == overflowed:
		return modeOverflowed
	case c == opened:
		return modeStreaming
	case c == closed:
		return modeStart
	}
	return m
}

// Options configure a reply.
type Options struct {
	// Streaming shows progress as a stream; off, or when Slack refuses,
	// a status message shows it.
	Streaming bool
	// Feedback is the block of feedback buttons under a final answer (none
	// when nil).
	Feedback slack.Block
	// Stopped reports whether someone stopped the turn; from then on no
	// progress is shown.
	Stopped func() bool
	// Speaker names the agent answering ("📋 John, Product Manager"): a
	// context line under the final answer says who speaks, streamed or
	// posted alike, also where Slack ignores Thread.As (a workspace that
	// did not grant chat:write.customize). "" shows none.
	Speaker string
	// Upload uploads one document the turn saved; Finish calls it once per
	// document, with its latest save, before the answer.
	Upload func(saved engine.Event)
	// Log receives the reply's logs; nil discards them.
	Log *slog.Logger
	// Guard is asked before every Slack call; once it returns an error
	// (the replica lost the thread's lease), the reply posts nothing more.
	Guard func() error
	// Record receives the output so far each time it changes (see
	// Output); Prior is what an earlier run of the turn recorded.
	Record func(Output)
	Prior  Output
	// Other is a stream another turn's run left open (its process died):
	// it is closed, marked interrupted, and never reused.
	Other string
}

// Reply renders one turn into its thread. Emit takes the engine's events
// (from several goroutines at once) and Finish ends the turn. A stream
// Slack closes mid-turn (it does after about five minutes) continues in a
// new stream message, with the text the closed one did not acknowledge.
// In channel threads a Stop button shows while a turn runs longer than a
// moment (status.go).
type Reply struct {
	ctx  context.Context // for Slack calls: outlives a stop of the turn
	p    Poster
	t    Thread
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	mode      mode
	streamTS  string // the open stream
	brokenTS  string // the stream Slack refused: the answer replaces it
	priorTS   string // the earlier run's stream, closed already: an answer showing nothing else replaces it
	cutTS     string // the earlier run's stream, cut mid-answer: its partial text goes once the answer is whole
	statusTS  string // the fallback's status message
	stopTS    string // the Stop button's message beside a stream
	stopTimer *time.Timer
	pending   strings.Builder // answer text not yet in a stream
	acked     strings.Builder // text the open stream acknowledged
	rollovers int             // streams continued in a new message
	lastFlush time.Time
	now       func() time.Time // the clock that paces flushes
	sleep     func(context.Context, time.Duration) error
	out       Output // what the turn showed so far (Options.Record)
	notices   []string
	thinking  bool // a status shows that the model is thinking
	// saved holds the documents written this turn, in the order first
	// written, each with its latest event: a document written several
	// times in a turn is uploaded once, at the end, with its final bytes.
	saved []engine.Event
}

// New returns the reply of one turn in t, which makes its Slack calls
// through p with ctx.
func New(ctx context.Context, p Poster, t Thread, opts Options) *Reply {
	r := &Reply{ctx: ctx, p: p, t: t, opts: opts, log: opts.Log, now: time.Now, sleep: retry.Sleep}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if opts.Guard != nil {
		r.p = guarded{Poster: p, guard: opts.Guard}
	}
	if !opts.Streaming {
		r.mode = modeFallback
	}
	if opts.Other != "" {
		_ = r.stopPrior(opts.Other)
	}
	r.closePrior(opts.Prior)
	return r
}

// on applies change c: the mode moves on, and what the change leaves
// behind is tidied.
func (r *Reply) on(c change) {
	switch c {
	case closed:
		// The closed stream keeps the text it acknowledged, shown as a
		// finished message; the next append opens a new stream below it.
		r.rollovers++
		r.log.Info("slack closed the stream; continuing in a new message", "rollovers", r.rollovers)
		r.settle(r.streamTS, r.acked.String())
		r.streamTS = ""
		r.acked.Reset()
	case refused:
		if r.streamTS != "" {
			r.brokenTS, r.streamTS = r.streamTS, ""
		}
	case stopped:
		if r.mode == modeOverflowed {
			r.pending.Reset() // it would not fit the stream
		}
	}
	r.mode = next(r.mode, c)
}

// quiet reports whether the reply shows no more progress: the turn ended,
// or someone stopped it.
func (r *Reply) quiet() bool {
	if r.mode < modeStopped && r.opts.Stopped != nil && r.opts.Stopped() {
		r.on(stopped)
	}
	return r.mode >= modeStopped
}

// Emit receives the engine's events; tool events may come from several
// goroutines at once. After a stop only saved documents are taken.
func (r *Reply) Emit(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Kind == engine.EventOutput {
		r.keep(ev)
		return
	}
	if r.quiet() {
		return
	}
	switch ev.Kind {
	case engine.EventThinking:
		r.think()
	case engine.EventText:
		r.doneThinking(false)
		r.pending.WriteString(ev.Text)
		if r.pending.Len() >= flushChars || r.now().Sub(r.lastFlush) >= flushEvery {
			r.flush()
		}
	case engine.EventToolStart:
		r.doneThinking(r.mode == modeFallback) // the fallback's status shows the tool
		r.flush()
		r.task(ev.CallID, ev.Status, slack.TaskCardStatusInProgress, "")
		if r.t.DM {
			r.setStatus(ev.Status)
		}
		r.showStopLocked() // a turn that uses tools takes a while
	case engine.EventToolEnd:
		st := slack.TaskCardStatusComplete
		if ev.Err != "" {
			st = slack.TaskCardStatusError
		}
		r.task(ev.CallID, ev.Status, st, slackmd.Shorten(ev.Err, 200))
	case engine.EventNotice:
		r.notices = append(r.notices, "_"+ev.Text+"_")
		r.pending.WriteString("\n\n_" + ev.Text + "_\n\n")
		r.flush()
	}
}

// keep records a saved document for upload at the end.
func (r *Reply) keep(ev engine.Event) {
	for i, prev := range r.saved {
		if prev.Output.Path == ev.Output.Path {
			r.saved[i] = ev
			return
		}
	}
	r.saved = append(r.saved, ev)
}

// ensureStream opens a stream on first use, and after Slack closed the
// previous one; a refusal switches to the status-message fallback.
func (r *Reply) ensureStream() bool {
	if r.mode == modeFallback || r.mode >= modeStopped {
		return false
	}
	if r.streamTS != "" {
		return true
	}
	r.out = Output{Starting: true, Notice: r.out.Notice}
	r.record()
	ts, err := r.p.StartStream(r.ctx, r.t)
	if err != nil {
		r.log.Info("streaming refused; falling back to message updates", "err", err)
		r.on(refused)
		return false
	}
	r.streamTS = ts
	r.on(opened)
	r.out = Output{StreamTS: ts, Open: true, Notice: r.out.Notice}
	r.record()
	return true
}

// appendChunk appends c to the stream. When Slack closed the stream, the
// turn continues in a new stream message with the same content, which
// the closed one never acknowledged; any other failure switches to the
// fallback and keeps the rest of the text for the final answer.
func (r *Reply) appendChunk(c Chunk) bool {
	for {
		if !r.ensureStream() {
			return false
		}
		err := r.p.AppendStream(r.ctx, r.t.Channel, r.streamTS, c)
		if err == nil {
			return true
		}
		if streamClosed(err) && !r.quiet() && r.rollovers < maxRollovers {
			r.on(closed)
			continue
		}
		r.log.Info("stream append failed; falling back to message updates", "err", err)
		r.on(refused)
		return false
	}
}

// settle turns a stream message Slack closed into a plain finished message
// with the text it acknowledged (and tail blocks), as chat.update can: a
// closed stream otherwise stays a broken placeholder.
func (r *Reply) settle(ts, text string, tail ...slack.Block) {
	if ts == "" {
		return
	}
	var blocks []slack.Block
	fallback := slackmd.Fallback(text, slackmd.DefaultFallbackChars)
	if strings.TrimSpace(text) != "" {
		blocks = append(blocks, slackmd.Block(text))
	} else {
		fallback = "(continued below)"
		blocks = append(blocks, slack.NewContextBlock("", slack.NewTextBlockObject(slack.MarkdownType, "_"+fallback+"_", false, false)))
	}
	blocks = append(blocks, tail...)
	if err := r.update(ts, Message{Text: fallback, Blocks: blocks}); err != nil {
		r.log.Debug("settle closed stream", "err", err)
	}
}

// flush sends buffered answer text to the stream; what the stream
// acknowledged is kept, so a rollover neither loses nor repeats text.
// Overflowed, fallen back or stopped, text waits for the final answer.
func (r *Reply) flush() {
	r.lastFlush = r.now()
	text := r.pending.String()
	if text == "" || !r.mode.streamsText() {
		return
	}
	if r.acked.Len()+len(text) > streamTextLimit {
		r.on(overflowed) // the final answer goes out as split messages
		return
	}
	if r.appendChunk(Chunk{Markdown: text}) {
		r.acked.WriteString(text)
		r.pending.Reset()
	}
}

// task shows a tool's progress as a task_update chunk, or in the status
// message when streaming is not available.
func (r *Reply) task(id, title string, st slack.TaskCardStatus, details string) {
	chunk := slack.NewTaskUpdateChunk(id, title)
	chunk.Status, chunk.Details = st, details
	if r.appendChunk(Chunk{Task: &chunk}) {
		return
	}
	if st != slack.TaskCardStatusInProgress {
		return
	}
	r.showStatus("⏳ " + title + "…")
}

// setStatus shows the assistant thread status (DMs).
func (r *Reply) setStatus(status string) {
	if err := r.p.SetStatus(r.ctx, r.t.Channel, r.t.TS, status); err != nil {
		r.log.Debug("assistant status", "err", err)
	}
}

// stopStream closes the open stream with c added at its end, tried again
// after passing failures, and records it closed (also when Slack had
// closed it already).
func (r *Reply) stopStream(c Chunk) error {
	err := r.again("chat.stopStream", func() error { return r.p.StopStream(r.ctx, r.t.Channel, r.streamTS, c) })
	if err == nil || streamClosed(err) {
		r.out.Open = false
		r.record()
	}
	return err
}

// post posts m in the reply's thread, as the agent the reply speaks as.
func (r *Reply) post(m Message) (string, error) {
	m.As = r.t.As
	return r.p.Post(r.ctx, r.t.Channel, r.t.TS, m)
}
