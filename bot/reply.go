package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine"
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

// reply renders one turn into its thread: progress as a stream of
// task_update chunks and markdown text (or a status message that is
// updated, when streaming is off or refused), the final answer with
// feedback buttons, and one upload per saved output. A stream Slack closes
// mid-turn (it does after about five minutes) continues in a new stream
// message, with the text not yet acknowledged. In channel threads a Stop
// button shows while a turn runs longer than a moment (stopbutton.go).
type reply struct {
	b   *Bot
	ctx context.Context // for Slack calls: outlives a stop of the turn
	it  item
	rt  *runningTurn // the turn, to tell whether someone stopped it

	mu        sync.Mutex
	streaming bool   // a stream is open
	streamTS  string // the open stream's message
	failed    bool   // streaming was refused: fall back
	statusTS  string // fallback status message
	stopTS    string // the Stop button's message beside a stream
	stopTimer *time.Timer
	done      bool // finish began: no more progress is shown
	pending   strings.Builder
	acked     strings.Builder // text the open stream acknowledged
	rollovers int             // streams continued in a new message
	overflow  bool
	lastFlush time.Time
	notices   []string

	// stoppedBy is the user who stopped the turn: its late answer is not
	// posted.
	stoppedBy string
	// saved holds the documents written this turn, in the order first
	// written, each with its latest event: a document written several
	// times in a turn is uploaded once, at the end, with its final bytes.
	saved []engine.Event
	// session is the id of the session whose turn this is, under which
	// its documents are stored.
	session string
}

func (b *Bot) newReply(ctx context.Context, it item, sessionID string) *reply {
	return &reply{b: b, ctx: ctx, it: it, session: sessionID, failed: b.cfg.NoStreaming}
}

// stopped reports whether someone stopped the turn.
func (r *reply) stopped() bool { return r.rt != nil && r.rt.stoppedBy() != "" }

// emit receives the engine's events; tool events may come from several
// goroutines at once. After a stop only saved documents are taken.
func (r *reply) emit(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Kind != engine.EventOutput && (r.done || r.stopped()) {
		return
	}
	switch ev.Kind {
	case engine.EventOutput:
		for i, prev := range r.saved {
			if prev.Output.Path == ev.Output.Path {
				r.saved[i] = ev
				return
			}
		}
		r.saved = append(r.saved, ev)
	case engine.EventText:
		r.pending.WriteString(ev.Text)
		if r.pending.Len() >= flushChars || time.Since(r.lastFlush) >= flushEvery {
			r.flush()
		}
	case engine.EventToolStart:
		r.flush()
		r.task(ev.CallID, ev.Status, slack.TaskCardStatusInProgress, "")
		if r.it.DM {
			r.setStatus(ev.Status)
		}
		r.showStopLocked() // a turn that uses tools takes a while
	case engine.EventToolEnd:
		st := slack.TaskCardStatusComplete
		if ev.Err != "" {
			st = slack.TaskCardStatusError
		}
		r.task(ev.CallID, ev.Status, st, shorten(ev.Err, 200))
	case engine.EventNotice:
		r.notices = append(r.notices, "_"+ev.Text+"_")
		r.pending.WriteString("\n\n_" + ev.Text + "_\n\n")
		r.flush()
	}
}

// ensureStream opens a stream on first use, and after Slack closed the
// previous one; a refusal switches to the status-message fallback.
func (r *reply) ensureStream() bool {
	if r.failed {
		return false
	}
	if r.streaming {
		return true
	}
	b := r.b
	opts := []slack.MsgOption{slack.MsgOptionTS(r.it.ThreadTS), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModeTimeline)}
	if !r.it.DM {
		opts = append(opts, slack.MsgOptionRecipientUserID(r.it.User), slack.MsgOptionRecipientTeamID(r.it.Team))
	}
	var ts string
	err := b.call(r.ctx, func() error {
		var err error
		_, ts, err = b.cfg.API.StartStreamContext(r.ctx, r.it.Channel, opts...)
		return err
	})
	if err != nil {
		b.log.Info("streaming refused; falling back to message updates", "err", err)
		r.failed = true
		return false
	}
	r.streaming, r.streamTS = true, ts
	return true
}

// streamClosed reports whether err says the stream is no longer open:
// Slack closes a stream after about five minutes (and when a user presses
// the agent session's stop button).
func streamClosed(err error) bool {
	e, ok := errors.AsType[slack.SlackErrorResponse](err)
	return ok && e.Err == "message_not_in_streaming_state"
}

// appendChunks appends to the stream. When Slack closed the stream, the
// turn continues in a new stream message with the same content, which
// the closed one never acknowledged; any other failure switches to the
// fallback and keeps the rest of the text for the final answer.
func (r *reply) appendChunks(opts ...slack.MsgOption) bool {
	b := r.b
	for {
		if !r.ensureStream() {
			return false
		}
		err := b.call(r.ctx, func() error {
			_, _, err := b.cfg.API.AppendStreamContext(r.ctx, r.it.Channel, r.streamTS, opts...)
			return err
		})
		if err == nil {
			return true
		}
		if streamClosed(err) && !r.stopped() && r.rollovers < maxRollovers {
			r.rollover()
			continue
		}
		b.log.Info("stream append failed; falling back to message updates", "err", err)
		r.failed, r.streaming = true, false
		return false
	}
}

// rollover leaves a stream Slack closed: its message keeps the text it
// acknowledged, shown as a finished message, and the next append opens a
// new stream below it.
func (r *reply) rollover() {
	r.rollovers++
	r.b.log.Info("slack closed the stream; continuing in a new message", "rollovers", r.rollovers)
	r.settle(r.streamTS, r.acked.String())
	r.streaming, r.streamTS = false, ""
	r.acked.Reset()
}

// settle turns a stream message Slack closed into a plain finished message
// with the text it acknowledged (and tail blocks), as chat.update can: a
// closed stream otherwise stays a broken placeholder.
func (r *reply) settle(ts, text string, tail ...slack.Block) {
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
	if err := r.b.update(r.ctx, r.it.Channel, ts, slack.MsgOptionText(fallback, false), slack.MsgOptionBlocks(blocks...)); err != nil {
		r.b.log.Debug("settle closed stream", "err", err)
	}
}

// flush sends buffered answer text to the stream; what the stream
// acknowledged is kept, so a rollover neither loses nor repeats text.
func (r *reply) flush() {
	r.lastFlush = time.Now()
	text := r.pending.String()
	if text == "" || r.overflow {
		return
	}
	if r.acked.Len()+len(text) > streamTextLimit {
		r.overflow = true // the final answer goes out as split messages
		return
	}
	if r.appendChunks(slack.MsgOptionMarkdownText(text)) {
		r.acked.WriteString(text)
		r.pending.Reset()
	}
}

// task shows a tool's progress as a task_update chunk, or in the status
// message when streaming is not available.
func (r *reply) task(id, title string, st slack.TaskCardStatus, details string) {
	chunk := slack.NewTaskUpdateChunk(id, title)
	chunk.Status, chunk.Details = st, details
	if r.appendChunks(slack.MsgOptionChunks(chunk)) {
		return
	}
	if st != slack.TaskCardStatusInProgress {
		return
	}
	r.showStatus("⏳ " + title + "…")
}

// setStatus shows the assistant thread status (DMs).
func (r *reply) setStatus(status string) {
	b := r.b
	err := b.call(r.ctx, func() error {
		return b.cfg.API.SetAssistantThreadsStatusContext(r.ctx, slack.AssistantThreadsSetStatusParameters{
			ChannelID: r.it.Channel, ThreadTS: r.it.ThreadTS, Status: status})
	})
	if err != nil {
		b.log.Debug("assistant status", "err", err)
	}
}

// stopStream closes the open stream with opts (text or blocks added at its
// end).
func (r *reply) stopStream(opts ...slack.MsgOption) error {
	b := r.b
	return b.call(r.ctx, func() error {
		_, _, err := b.cfg.API.StopStreamContext(r.ctx, r.it.Channel, r.streamTS, opts...)
		return err
	})
}

// finish uploads the documents of this turn, then posts the final answer
// with feedback buttons (or, after a stop, only says so).
func (r *reply) finish(res *engine.Result, turnErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	if r.stopTimer != nil {
		r.stopTimer.Stop()
	}
	for _, ev := range r.saved {
		// From the store, as any replica would serve it.
		data, err := r.b.cfg.Store.OutputData(r.session, ev.Output.Path, ev.Output.Version)
		r.b.upload(r.ctx, r.it, upload{ev: ev, data: data, err: err})
	}
	if r.it.DM {
		r.setStatus("")
	}
	if r.stoppedBy != "" {
		r.finishStopped()
		return
	}
	b := r.b
	final := ""
	if res != nil {
		final = res.Text
	}
	if turnErr != nil {
		final = "⚠️ " + friendlyError(turnErr)
		if res != nil && res.Text != "" && (r.failed || !r.streaming) && r.rollovers == 0 {
			final = res.Text + "\n\n" + final
		}
	}
	var tail []slack.Block
	waiting := turnErr == nil && res != nil && len(res.Pending) > 0
	if turnErr == nil && strings.TrimSpace(final) != "" {
		tail = append(tail, feedbackBlock())
	}
	if waiting {
		tail = append(tail, slack.NewContextBlock("waiting", slack.NewTextBlockObject(slack.MarkdownType, waitingText(len(res.Pending)), false, false)))
	}
	if !r.failed && !r.overflow && turnErr == nil {
		r.flush()
	}
	// The whole answer streamed: close the stream, and it is the answer.
	if r.streaming && !r.failed && !r.overflow && r.pending.Len() == 0 && turnErr == nil {
		var opts []slack.MsgOption
		if len(tail) > 0 {
			opts = append(opts, slack.MsgOptionBlocks(tail...))
		}
		err := r.stopStream(opts...)
		if err == nil {
			r.dropStop()
			return
		}
		if streamClosed(err) {
			// Closed after the last append: every word is in it.
			r.settle(r.streamTS, r.acked.String(), tail...)
			r.dropStop()
			return
		}
		b.log.Info("stop stream failed; posting the answer", "err", err)
	} else if r.streaming {
		_ = r.stopStream()
	}
	r.dropStop()
	if final == "" {
		if r.statusTS != "" && waiting {
			_ = b.update(r.ctx, r.it.Channel, r.statusTS, slack.MsgOptionText(waitingText(len(res.Pending)), false), slack.MsgOptionBlocks())
		} else if r.statusTS != "" {
			_ = b.update(r.ctx, r.it.Channel, r.statusTS, slack.MsgOptionText("✅ Done.", false), slack.MsgOptionBlocks())
		}
		return
	}
	// Fallback: the status message, or the refused or overflowing stream,
	// is replaced by the first piece of the answer; the rest follows. A
	// healthy stream stays as it is and an error is posted below it.
	replace := r.statusTS
	if replace == "" && (r.failed || r.overflow) {
		replace = r.streamTS
	}
	switch {
	case r.rollovers > 0 && (r.failed || r.overflow) && turnErr == nil:
		// Earlier stream messages hold the start of the answer: only what
		// they do not show follows, notices included.
		final = r.acked.String() + r.pending.String()
	case (r.failed || r.overflow || !r.streaming) && len(r.notices) > 0:
		final = strings.Join(r.notices, "\n") + "\n\n" + final
	}
	if err := b.postAnswer(r.ctx, r.it.Channel, r.it.ThreadTS, replace, final, tail...); err != nil {
		b.log.Error("post answer", "err", err)
	}
}

// finishStopped ends a turn someone stopped: the stream keeps what was
// said (with the text not yet shown), and the thread is told who stopped
// it, in the status or Stop button message when there is one. The late
// answer is never posted.
func (r *reply) finishStopped() {
	b := r.b
	if r.streaming {
		var opts []slack.MsgOption
		if text := r.pending.String(); text != "" && !r.overflow && r.acked.Len()+len(text) <= streamTextLimit {
			opts = append(opts, slack.MsgOptionMarkdownText(text))
		}
		if err := r.stopStream(opts...); err != nil {
			b.log.Debug("stop stream after a stop", "err", err) // Slack's stop button ends it too
		}
	}
	note := "⏹ Stopped by <@" + r.stoppedBy + ">. What was said so far is kept; write to continue."
	ts := r.statusTS
	if ts == "" {
		ts, r.stopTS = r.stopTS, ""
	}
	r.dropStop()
	if ts != "" {
		if err := b.update(r.ctx, r.it.Channel, ts, slack.MsgOptionText(note, false), slack.MsgOptionBlocks()); err == nil {
			return
		}
	}
	b.post(r.ctx, r.it.Channel, r.it.ThreadTS, note)
}

// friendlyError is what the user reads when a turn fails; details go to the
// log.
func friendlyError(err error) string {
	if msg, ok := budgetMessage(err); ok {
		return msg
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "This took too long and was stopped. Your message is saved; ask me to continue."
	case errors.Is(err, context.Canceled):
		return "I was interrupted (the bot is restarting). I'll pick this up when I'm back."
	}
	return "Something went wrong talking to the model: " + shorten(err.Error(), 300) + " — your message is saved in this thread; reply “continue” to try again."
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// waitingText is the status of a turn that waits for n approvals.
func waitingText(n int) string {
	if n == 1 {
		return "⏸ Waiting for approval of a tool call (below)."
	}
	return fmt.Sprintf("⏸ Waiting for approval of %d tool calls (below).", n)
}
