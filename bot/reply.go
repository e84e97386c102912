package bot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/engine"
	"agentbot/engine/sandbox"
)

const (
	// streamTextLimit is how much text one streamed message holds; a longer
	// answer is posted as split markdown messages instead.
	streamTextLimit = 9000
	// flushEvery and flushChars pace appendStream calls.
	flushEvery = 600 * time.Millisecond
	flushChars = 400
)

// reply renders one turn into its thread: progress as a stream of
// task_update chunks and markdown text (or a status message that is
// updated, when streaming is off, refused or expired), the final answer,
// and one upload per saved output.
type reply struct {
	b   *Bot
	ctx context.Context
	it  item

	mu        sync.Mutex
	streaming bool   // a stream is open
	streamTS  string // the stream's message
	failed    bool   // streaming was refused or expired: fall back
	statusTS  string // fallback status message
	pending   strings.Builder
	streamed  int // characters of text appended to the stream
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
}

func (b *Bot) newReply(ctx context.Context, it item) *reply {
	return &reply{b: b, ctx: ctx, it: it, failed: b.cfg.NoStreaming}
}

// emit receives the engine's events; tool events may come from several
// goroutines at once.
func (r *reply) emit(ev engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
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

// ensureStream opens the stream on first use; a refusal switches to the
// status-message fallback.
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

// appendChunks appends to the stream; an expired stream switches to the
// fallback and keeps the rest of the text for the final answer.
func (r *reply) appendChunks(opts ...slack.MsgOption) bool {
	if !r.ensureStream() {
		return false
	}
	b := r.b
	err := b.call(r.ctx, func() error {
		_, _, err := b.cfg.API.AppendStreamContext(r.ctx, r.it.Channel, r.streamTS, opts...)
		return err
	})
	if err != nil {
		b.log.Info("stream append failed; falling back to message updates", "err", err)
		r.failed, r.streaming = true, false
		return false
	}
	return true
}

// flush sends buffered answer text to the stream.
func (r *reply) flush() {
	r.lastFlush = time.Now()
	text := r.pending.String()
	if text == "" || r.overflow {
		return
	}
	if r.streamed+len(text) > streamTextLimit {
		r.overflow = true // the final answer goes out as split messages
		return
	}
	if r.appendChunks(slack.MsgOptionMarkdownText(text)) {
		r.streamed += len(text)
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
	text := "⏳ " + title + "…"
	b := r.b
	if r.statusTS == "" {
		ts, err := b.postMsg(r.ctx, r.it.Channel, r.it.ThreadTS, slack.MsgOptionText(text, false))
		if err == nil {
			r.statusTS = ts
		}
		return
	}
	_ = b.update(r.ctx, r.it.Channel, r.statusTS, slack.MsgOptionText(text, false))
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

// finish uploads the documents of this turn, then posts the final answer.
func (r *reply) finish(res *engine.Result, turnErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.saved {
		data, err := os.ReadFile(ev.HostPath)
		r.b.upload(r.ctx, r.it, upload{ev: ev, data: data, err: err})
	}
	b := r.b
	final := ""
	if res != nil {
		final = res.Text
	}
	if r.stoppedBy != "" {
		final = "⏹ Stopped by <@" + r.stoppedBy + ">. What was said so far is kept; write to continue."
	}
	if turnErr != nil {
		final = "⚠️ " + friendlyError(turnErr)
		if res != nil && res.Text != "" && (r.failed || !r.streaming) {
			final = res.Text + "\n\n" + final
		}
	}
	if r.it.DM {
		r.setStatus("")
	}
	if !r.failed && !r.overflow && turnErr == nil {
		r.flush()
	}
	if r.stoppedBy != "" {
		if r.streaming {
			_ = b.call(r.ctx, func() error {
				_, _, err := b.cfg.API.StopStreamContext(r.ctx, r.it.Channel, r.streamTS)
				return err
			})
		}
		if r.statusTS != "" {
			_ = b.update(r.ctx, r.it.Channel, r.statusTS, slack.MsgOptionText(final, false))
			return
		}
		b.post(r.ctx, r.it.Channel, r.it.ThreadTS, final)
		return
	}
	// The whole answer streamed: close the stream, and it is the answer.
	if r.streaming && !r.failed && !r.overflow && r.pending.Len() == 0 && turnErr == nil {
		err := b.call(r.ctx, func() error {
			_, _, err := b.cfg.API.StopStreamContext(r.ctx, r.it.Channel, r.streamTS)
			return err
		})
		if err == nil {
			return
		}
		b.log.Info("stop stream failed; posting the answer", "err", err)
	} else if r.streaming {
		_ = b.call(r.ctx, func() error {
			_, _, err := b.cfg.API.StopStreamContext(r.ctx, r.it.Channel, r.streamTS)
			return err
		})
	}
	if final == "" {
		if r.statusTS != "" {
			_ = b.update(r.ctx, r.it.Channel, r.statusTS, slack.MsgOptionText("✅ Done.", false))
		}
		return
	}
	// Fallback: the status message, or the expired or overflowing stream,
	// is replaced by the first piece of the answer; the rest follows. A
	// healthy stream stays as it is and an error is posted below it.
	replace := r.statusTS
	if replace == "" && (r.failed || r.overflow) {
		replace = r.streamTS
	}
	if (r.failed || r.overflow || !r.streaming) && len(r.notices) > 0 {
		final = strings.Join(r.notices, "\n") + "\n\n" + final
	}
	if err := b.postAnswer(r.ctx, r.it.Channel, r.it.ThreadTS, replace, final); err != nil {
		b.log.Error("post answer", "err", err)
	}
}

// upload is a saved document to upload, with its bytes as read at the end
// of the turn.
type upload struct {
	ev   engine.Event
	data []byte
	err  error
}

// upload sends one saved output to the thread with UploadFile (the v2
// upload flow); a re-save is titled as a new version.
func (b *Bot) upload(ctx context.Context, it item, u upload) {
	o := u.ev.Output
	name := path.Base(o.Path)
	title := name
	if o.Version > 1 {
		title = fmt.Sprintf("%s, v%d", name, o.Version)
	}
	err := u.err
	if err == nil {
		err = b.call(ctx, func() error {
			_, err := b.cfg.API.UploadFileContext(ctx, slack.UploadFileParameters{
				Reader: bytes.NewReader(u.data), FileSize: len(u.data), Filename: name, Title: title,
				InitialComment: fmt.Sprintf("📄 Saved *%s* (v%d, %s)", o.Path, o.Version, sandbox.SizeText(int64(len(u.data)))),
				Channel:        it.Channel, ThreadTimestamp: it.ThreadTS,
			})
			return err
		})
	}
	b.obs.Uploaded(err)
	if err != nil {
		b.log.Error("upload output", "file", name, "err", err)
		b.post(ctx, it.Channel, it.ThreadTS, fmt.Sprintf("⚠️ I saved %s but couldn't upload it to this thread (%v).", o.Path, err))
	}
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
