package render

import (
	"cmp"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
)

// ActionStop is the action id of the Stop button of a running turn.
const ActionStop = "stop"

// stopButtonAfter is how long a turn runs in a channel thread before its
// Stop button shows, unless a tool call shows it sooner: a quick answer
// never flashes one. Slack's own stop button (agent_session_stopped) is
// there from the start.
const stopButtonAfter = 15 * time.Second

// workingText is the status line of a running turn.
const workingText = "⏳ Working…"

// thinkingText is the status line while the model reasons before it
// answers, and thinkingStatus the assistant thread's status then (DMs).
// The reasoning itself is never shown.
const (
	thinkingText   = "💭 Thinking…"
	thinkingStatus = "is thinking…"
)

// think shows that the model is reasoning: the assistant thread's status
// in DMs, the fallback's status message, or the status line beside a
// stream (with the Stop button: a model that thinks takes a while).
func (r *Reply) think() {
	if r.thinking {
		return
	}
	r.thinking = true
	switch {
	case r.t.DM:
		r.setStatus(thinkingStatus)
	case r.mode == modeFallback:
		r.showStatus(thinkingText)
	case r.stopTS != "":
		_ = r.p.Update(r.ctx, r.t.Channel, r.stopTS, r.statusMessage(thinkingText))
	default:
		r.showStopLocked()
	}
}

// doneThinking puts the status line back to working when the answer or a
// tool call begins, unless the caller replaces it (replaced); the
// assistant thread's status gives way to the reply on its own.
func (r *Reply) doneThinking(replaced bool) {
	if !r.thinking {
		return
	}
	r.thinking = false
	if ts := cmp.Or(r.statusTS, r.stopTS); ts != "" && !r.t.DM && !replaced {
		_ = r.p.Update(r.ctx, r.t.Channel, ts, r.statusMessage(workingText))
	}
}

// statusMessage renders a status line; in channel threads it carries the
// Stop button. A stream cannot carry it: blocks added to a stream stay in
// the finished message, so the button sits in a message of its own (or in
// the status message of the fallback) that goes away when the turn ends.
func (r *Reply) statusMessage(text string) Message {
	if r.t.DM {
		return Message{Text: text}
	}
	stop := slack.NewButtonBlockElement(ActionStop, "stop", slack.NewTextBlockObject(slack.PlainTextType, "⏹ Stop", true, false))
	stop.Style = slack.StyleDanger
	return Message{Text: text, Blocks: []slack.Block{
		slack.NewContextBlock("status", slack.NewTextBlockObject(slack.MarkdownType, slackmd.EscapeText(text), false, false)),
		slack.NewActionBlock("stop", stop)}}
}

// showStatus shows text in the fallback's status message, posting it on
// first use; a Stop button message already shown becomes that message.
func (r *Reply) showStatus(text string) {
	if r.statusTS == "" && r.stopTS != "" {
		r.statusTS, r.stopTS = r.stopTS, ""
	}
	if r.statusTS == "" && r.out.Notice != "" {
		r.statusTS = r.out.Notice // an earlier run's notice: the answer takes its place
	}
	if r.statusTS == "" {
		ts, err := r.post(r.statusMessage(text))
		if err == nil {
			r.statusTS = ts
		}
		return
	}
	_ = r.p.Update(r.ctx, r.t.Channel, r.statusTS, r.statusMessage(text))
}

// ArmStop shows the Stop button once the turn has run for a while (in
// channel threads; DMs have Slack's own); the first tool call shows it at
// once.
func (r *Reply) ArmStop() {
	if r.t.DM {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopTimer = time.AfterFunc(stopButtonAfter, r.showStop)
}

// showStop posts the Stop button, unless the turn has ended or already
// shows a status message (which carries it).
func (r *Reply) showStop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.showStopLocked()
}

// showStopLocked is showStop with r.mu held.
func (r *Reply) showStopLocked() {
	if r.t.DM || r.quiet() || r.statusTS != "" || r.stopTS != "" {
		return
	}
	text := workingText
	if r.thinking {
		text = thinkingText
	}
	ts, err := r.post(r.statusMessage(text))
	if err != nil {
		r.log.Debug("post stop button", "err", err)
		return
	}
	if r.mode == modeFallback {
		r.statusTS = ts // the fallback's status message
		return
	}
	r.stopTS = ts
}

// dropStop deletes the Stop button's message beside a stream.
func (r *Reply) dropStop() {
	if r.stopTS == "" {
		return
	}
	ts := r.stopTS
	r.stopTS = ""
	if err := r.p.Delete(r.ctx, r.t.Channel, ts); err != nil {
		r.log.Debug("delete stop button", "err", err)
	}
}
