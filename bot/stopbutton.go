package bot

import (
	"time"

	"github.com/slack-go/slack"
)

// stopButtonAfter is how long a turn runs in a channel thread before its
// Stop button shows, unless a tool call shows it sooner: a quick answer
// never flashes one. Slack's own stop button (agent_session_stopped) is
// there from the start.
const stopButtonAfter = 15 * time.Second

// workingText is the status line of a running turn.
const workingText = "⏳ Working…"

// statusOpts renders a status line; in channel threads it carries the Stop
// button. A stream cannot carry it: blocks added to a stream stay in the
// finished message, so the button sits in a message of its own (or in the
// status message of the fallback) that goes away when the turn ends.
func (r *reply) statusOpts(text string) []slack.MsgOption {
	opts := []slack.MsgOption{slack.MsgOptionText(text, false)}
	if r.it.DM {
		return opts
	}
	stop := slack.NewButtonBlockElement(actionStop, "stop", slack.NewTextBlockObject(slack.PlainTextType, "⏹ Stop", true, false))
	stop.Style = slack.StyleDanger
	return append(opts, slack.MsgOptionBlocks(
		slack.NewContextBlock("status", slack.NewTextBlockObject(slack.MarkdownType, text, false, false)),
		slack.NewActionBlock("stop", stop)))
}

// showStatus shows text in the fallback's status message, posting it on
// first use; a Stop button message already shown becomes that message.
func (r *reply) showStatus(text string) {
	b := r.b
	if r.statusTS == "" && r.stopTS != "" {
		r.statusTS, r.stopTS = r.stopTS, ""
	}
	if r.statusTS == "" {
		ts, err := b.postMsg(r.ctx, r.it.Channel, r.it.ThreadTS, r.statusOpts(text)...)
		if err == nil {
			r.statusTS = ts
		}
		return
	}
	_ = b.update(r.ctx, r.it.Channel, r.statusTS, r.statusOpts(text)...)
}

// armStop shows the Stop button once the turn has run for a while (in
// channel threads; DMs have Slack's own); the first tool call shows it at
// once (emit).
func (r *reply) armStop() {
	if r.it.DM {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopTimer = time.AfterFunc(stopButtonAfter, r.showStop)
}

// showStop posts the Stop button, unless the turn has ended or already
// shows a status message (which carries it).
func (r *reply) showStop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.showStopLocked()
}

// showStopLocked is showStop with r.mu held.
func (r *reply) showStopLocked() {
	if r.it.DM || r.done || r.stopped() || r.statusTS != "" || r.stopTS != "" {
		return
	}
	ts, err := r.b.postMsg(r.ctx, r.it.Channel, r.it.ThreadTS, r.statusOpts(workingText)...)
	if err != nil {
		r.b.log.Debug("post stop button", "err", err)
		return
	}
	if r.failed {
		r.statusTS = ts // the fallback's status message
		return
	}
	r.stopTS = ts
}

// dropStop deletes the Stop button's message beside a stream.
func (r *reply) dropStop() {
	if r.stopTS == "" {
		return
	}
	b, ts := r.b, r.stopTS
	r.stopTS = ""
	err := b.call(r.ctx, func() error {
		_, _, err := b.cfg.API.DeleteMessageContext(r.ctx, r.it.Channel, ts)
		return err
	})
	if err != nil {
		b.log.Debug("delete stop button", "err", err)
	}
}
