package render

import (
	"strings"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
)

// PostStaging posts a party's staging (the orchestrator's lines between
// the personas' turns) in the reply's thread as a context block, under the
// app's own name, set apart from the personas' messages. Blank text posts
// nothing.
func (r *Reply) PostStaging(text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode >= modeStopped {
		return nil
	}
	block := slack.NewContextBlock("staging", slack.NewTextBlockObject(slack.MarkdownType, slackmd.EscapeText(slackmd.Shorten(text, 2900)), false, false))
	_, err := r.p.Post(r.ctx, r.t.Channel, r.t.TS, Message{Text: slackmd.Fallback(text, slackmd.DefaultFallbackChars), Blocks: []slack.Block{block}, Plain: text})
	return err
}

// SetFeedback sets the feedback block under the reply's final answer: a
// party's last persona turn gets the buttons the turn's first reply would
// have had.
func (r *Reply) SetFeedback(b slack.Block) {
	r.mu.Lock()
	r.opts.Feedback = b
	r.mu.Unlock()
}
