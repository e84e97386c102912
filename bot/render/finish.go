package render

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
)

// Outcome is how a turn ended.
type Outcome struct {
	// Text is the model's answer; "" when there is none.
	Text string
	// Failure is what the person reads when the turn failed; "" when it
	// succeeded.
	Failure string
	// Waiting is how many tool calls of a successful turn wait for
	// approval.
	Waiting int
	// StoppedBy is the user who stopped the turn: its late answer is never
	// posted.
	StoppedBy string
	// Retry says the turn failed while its message stays queued, to run
	// again (the store was unreachable): Failure, when set, is a notice,
	// recorded as Output.Notice, and the next run's answer takes its place.
	// Nothing the run showed is recorded as the answer.
	Retry bool
}

// Finish ends the turn: it uploads the documents the turn saved, then
// shows the final answer the way the reply's mode calls for, with the
// feedback buttons (or, after a stop, only says who stopped it). It runs
// once; Emit shows nothing after it.
func (r *Reply) Finish(o Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == modeDone {
		return
	}
	if r.stopTimer != nil {
		r.stopTimer.Stop()
	}
	r.uploadSaved()
	if r.t.DM {
		r.setStatus("")
	}
	if o.StoppedBy != "" {
		r.on(stopped)
	}
	if o.Retry && o.StoppedBy == "" {
		r.finishRetry(o.Failure)
		r.on(finished)
		return
	}
	if o.Failure == "" {
		r.flush()
	}
	tail := r.tail(o)
	switch r.mode {
	case modeStreaming:
		r.finishStreaming(o, tail)
	case modeOverflowed:
		r.finishOverflowed(o, tail)
	case modeFallback:
		r.finishFallback(o, tail)
	case modeStopped:
		// Without StoppedBy only when the bot shuts down as someone
		// stops the turn.
		r.finishStopped(o.StoppedBy)
	default:
		r.finishStart(o, tail)
	}
	r.settleEarlier()
	r.on(finished)
}

// finishRetry ends a run whose message stays queued, to run again: a
// stream it opened is closed as interrupted, and the failure is posted as
// the turn's notice (or replaces the notice an earlier run posted), never
// recorded as the answer. Without a failure to tell, a status message the
// run showed becomes the notice, for the next run to reuse.
func (r *Reply) finishRetry(failure string) {
	if r.streamTS != "" {
		_ = r.stopStream(InterruptedNote())
	}
	r.dropStop()
	if failure == "" {
		if r.statusTS != "" && r.out.Notice == "" {
			r.out.Notice = r.statusTS
		}
		r.record()
		return
	}
	m := Message{Text: "⚠️ " + failure, Blocks: noBlocks}
	switch {
	case r.out.Notice != "" && r.update(r.out.Notice, m) == nil:
	case r.statusTS != "" && r.update(r.statusTS, m) == nil:
		r.out.Notice, r.statusTS = r.statusTS, ""
	default:
		ts, err := r.post(Message{Text: m.Text})
		if err != nil {
			r.log.Error("post the failure notice", "err", err)
			return
		}
		r.out.Notice = ts
	}
	r.record()
}

// settleEarlier rewrites, once the whole answer is in the thread, what
// earlier runs of the turn left above it: their notice (Output.Notice)
// says the answer is below, and the stream one cut mid-answer loses its
// partial text, so the thread shows one answer. A message the answer took
// the place of is left as it is.
func (r *Reply) settleEarlier() {
	if !r.out.Done {
		return
	}
	for _, e := range []struct{ ts, text string }{{r.out.Notice, noticeAnswered}, {r.cutTS, cutAnswered}} {
		if e.ts == "" || e.ts == r.out.AnswerTS || e.ts == r.out.StreamTS {
			continue
		}
		if err := r.update(e.ts, Message{Text: e.text, Blocks: noBlocks}); err != nil {
			r.log.Warn("settle what an earlier run left above the answer", "ts", e.ts, "err", err)
		}
	}
}

// uploadSaved uploads the documents the turn saved, each once.
func (r *Reply) uploadSaved() {
	if r.opts.Upload == nil {
		return
	}
	for _, ev := range r.saved {
		r.opts.Upload(ev)
	}
}

// tail is the blocks under a successful final answer: who speaks, the
// feedback buttons, and the note of tool calls waiting for approval.
func (r *Reply) tail(o Outcome) []slack.Block {
	if o.Failure != "" {
		return nil
	}
	var tail []slack.Block
	if strings.TrimSpace(o.Text) != "" && r.opts.Speaker != "" {
		tail = append(tail, slack.NewContextBlock("speaker", slack.NewTextBlockObject(slack.MarkdownType, slackmd.EscapeText(r.opts.Speaker), false, false)))
	}
	if strings.TrimSpace(o.Text) != "" && r.opts.Feedback != nil {
		tail = append(tail, r.opts.Feedback)
	}
	if o.Waiting > 0 {
		tail = append(tail, slack.NewContextBlock("waiting", slack.NewTextBlockObject(slack.MarkdownType, waitingText(o.Waiting), false, false)))
	}
	return tail
}

// finishStreaming ends a turn whose whole answer streamed: the stream,
// closed with the tail, is the answer. A failure is posted below it.
func (r *Reply) finishStreaming(o Outcome, tail []slack.Block) {
	if o.Failure != "" {
		_ = r.stopStream(Chunk{})
		r.dropStop()
		r.postFinal("", answer(o, false), nil)
		return
	}
	err := r.stopStream(Chunk{Blocks: tail})
	switch {
	case err == nil:
	case streamClosed(err):
		// Closed after the last append: every word is in it.
		r.settle(r.streamTS, r.acked.String(), tail...)
	default:
		// The open stream shows the whole answer: posting it again would
		// answer twice. The stream stays recorded open (Output), and the
		// turn's next run closes it.
		r.log.Error("stop stream failed after retries; the stream shows the answer and is closed on resume", "err", err)
		r.dropStop()
		return
	}
	r.out.Done = true
	r.record()
	r.dropStop()
}

// finishOverflowed ends a turn whose answer outgrew the stream: the stream
// (if one is open) is closed, and the answer, split, takes its place.
func (r *Reply) finishOverflowed(o Outcome, tail []slack.Block) {
	open := r.streamTS != ""
	if open {
		_ = r.stopStream(Chunk{})
	}
	r.dropStop()
	if final := answer(o, !open && r.rollovers == 0); final != "" {
		r.postFinal(r.streamTS, r.rest(o, final), tail)
	}
}

// finishFallback ends a turn shown with a status message: the answer
// replaces it (or the stream Slack refused), and an empty answer leaves it
// saying the turn is done or waits for approval.
func (r *Reply) finishFallback(o Outcome, tail []slack.Block) {
	r.dropStop()
	final := answer(o, r.rollovers == 0)
	if final != "" {
		replace := cmp.Or(r.statusTS, r.brokenTS, r.out.Notice)
		r.postFinal(replace, r.rest(o, final), tail)
		return
	}
	if r.statusTS == "" {
		return
	}
	done := "✅ Done."
	if o.Waiting > 0 {
		done = waitingText(o.Waiting)
	}
	_ = r.update(r.statusTS, Message{Text: done, Blocks: noBlocks})
}

// finishStart ends a turn that showed nothing yet: the answer is posted,
// in place of the earlier run's closed stream when there is one (the
// answer it resumed was stored: that stream may show it whole).
func (r *Reply) finishStart(o Outcome, tail []slack.Block) {
	r.dropStop()
	replace := cmp.Or(r.priorTS, r.out.Notice) // a kept message's notice: the answer takes its place
	if final := answer(o, true); final != "" {
		r.postFinal(replace, r.rest(o, final), tail)
	}
}

// finishStopped ends a turn someone stopped: the stream keeps what was
// said (with the text not yet shown), and the thread is told who stopped
// it, in the status or Stop button message when there is one. The late
// answer is never posted.
func (r *Reply) finishStopped(by string) {
	if r.streamTS != "" {
		var c Chunk
		if text := r.pending.String(); r.acked.Len()+len(text) <= streamTextLimit {
			c.Markdown = text
		}
		if err := r.stopStream(c); err != nil {
			r.log.Debug("stop stream after a stop", "err", err) // Slack's stop button ends it too
		}
	}
	note := "⏹ Stopped. What was said so far is kept; write to continue."
	if by != "" {
		note = "⏹ Stopped by <@" + by + ">. What was said so far is kept; write to continue."
	}
	ts := r.statusTS
	if ts == "" {
		ts, r.stopTS = r.stopTS, ""
	}
	r.dropStop()
	if ts != "" && r.update(ts, Message{Text: note, Blocks: noBlocks}) == nil {
		return
	}
	if _, err := r.post(Message{Text: note}); err != nil {
		r.log.Error("post message", "channel", r.t.Channel, "err", err)
	}
}

// answer is the text of the final answer: the model's, or the failure,
// after the model's text when the thread has not seen it (unseen).
func answer(o Outcome, unseen bool) string {
	switch {
	case o.Failure == "":
		return o.Text
	case unseen && o.Text != "":
		return o.Text + "\n\n⚠️ " + o.Failure
	}
	return "⚠️ " + o.Failure
}

// rest is what the posted final answer says besides what the thread
// shows: after a rollover, only the text the earlier stream messages do
// not hold, notices included; otherwise final after the turn's notices.
func (r *Reply) rest(o Outcome, final string) string {
	switch {
	case r.rollovers > 0 && o.Failure == "":
		return r.acked.String() + r.pending.String()
	case len(r.notices) > 0:
		return strings.Join(r.notices, "\n") + "\n\n" + final
	}
	return final
}

// postFinal posts the final answer (replacing the message replace, if
// set), logging a failure.
func (r *Reply) postFinal(replace, text string, tail []slack.Block) {
	if err := r.postAnswer(replace, text, tail...); err != nil {
		r.log.Error("post answer", "err", err)
	}
}

// postAnswer renders an answer: split at paragraph or fence boundaries into
// markdown blocks of at most slackmd.MaxPieceChars, each message with a
// short plain-text fallback. With replaceTS set, the first piece replaces
// that message (a status or expired stream); if that fails it is posted
// anew. tail blocks (the feedback buttons) follow the last piece.
func (r *Reply) postAnswer(replaceTS, text string, tail ...slack.Block) error {
	pieces := slackmd.Split(text, slackmd.MaxPieceChars)
	for i, p := range pieces {
		blocks := []slack.Block{slackmd.Block(p)}
		if i == len(pieces)-1 {
			blocks = append(blocks, tail...)
		}
		m := Message{Text: slackmd.Fallback(p, slackmd.DefaultFallbackChars), Blocks: blocks, Plain: p}
		if i == 0 && replaceTS != "" {
			if err := r.update(replaceTS, m); err == nil {
				r.answered(replaceTS, i == len(pieces)-1)
				continue
			}
		}
		ts, err := r.post(m)
		if err != nil {
			return err
		}
		r.answered(ts, i == len(pieces)-1)
	}
	return nil
}

// answered records a piece of the final answer posted as message ts;
// last says it was the last piece.
func (r *Reply) answered(ts string, last bool) {
	if r.out.AnswerTS == "" {
		r.out.AnswerTS = ts
	}
	r.out.Done = last
	r.record()
}

// waitingText is the status of a turn that waits for n approvals.
func waitingText(n int) string {
	if n == 1 {
		return "⏸ Waiting for approval of a tool call (below)."
	}
	return fmt.Sprintf("⏸ Waiting for approval of %d tool calls (below).", n)
}
