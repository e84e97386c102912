package view

import (
	"fmt"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
)

// Slack's limits on what the bot builds, each kept where blocks are built.
const (
	// MaxMessageText is the block text one message carries: Slack refuses
	// msg_blocks_too_long past about 12,000 characters of text in all
	// blocks together (slackapi/bolt-js#2509); we keep a margin.
	MaxMessageText = 11_000
	// MaxButtonLabel is a button's text: Slack allows 75 characters
	// (https://docs.slack.dev/reference/block-kit/block-elements/button-element).
	MaxButtonLabel = 70
	// MaxPickerButtons is how many agents the picker offers as buttons (four
	// actions blocks, some 7,000 characters of labels); the rest are named
	// by /agent list. A greeting's menu has as many buttons at most; the
	// rest are in its text, to type.
	MaxPickerButtons = 100
	// MaxHomeBlocks is a Home tab's blocks (Slack allows 100 in a view:
	// https://docs.slack.dev/reference/block-kit/blocks).
	MaxHomeBlocks = 100
	// MaxSectionText is a section's text (3,000 characters:
	// https://docs.slack.dev/reference/block-kit/blocks/section-block).
	MaxSectionText = 3000
	// MaxButtons is how many buttons one actions block holds.
	MaxButtons = 25
)

// Runes counts the characters Slack counts.
func Runes(s string) int { return utf8.RuneCountInString(s) }

// ButtonLabel cuts label to fit a button, keeping suffix whole.
func ButtonLabel(label, suffix string) string {
	return slackmd.Shorten(label, MaxButtonLabel-Runes(suffix)) + suffix
}

// BlocksText counts the text of blocks as Slack does for
// msg_blocks_too_long: every text object and markdown block.
func BlocksText(blocks []slack.Block) int {
	n := 0
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.MarkdownBlock:
			n += Runes(b.Text)
		case *slack.SectionBlock:
			if b.Text != nil {
				n += Runes(b.Text.Text)
			}
		case *slack.ActionBlock:
			for _, e := range b.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.Text != nil {
					n += Runes(btn.Text.Text)
				}
			}
		case *slack.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					n += Runes(t.Text)
				}
			}
		}
	}
	return n
}

// Message is one message of markdown text: its text, shown as a markdown
// block, and the blocks that follow it.
type Message struct {
	Text  string
	Extra []slack.Block
}

// Messages lays markdown text followed by tail blocks (buttons, a hint)
// out within Slack's limits: one message when it all fits, otherwise the
// text split into messages of its own (slackmd.Split) and tail with the
// last piece, or alone (under tailNote) when even that is too long.
func Messages(md, tailNote string, tail []slack.Block) []Message {
	tailText := BlocksText(tail)
	pieces := []string{md}
	if Runes(md)+tailText > MaxMessageText {
		// The last piece makes room for the tail, unless the tail is so long
		// that it is better alone.
		limit := MaxMessageText - tailText
		if limit < slackmd.MaxPieceChars/2 {
			limit = slackmd.MaxPieceChars
		}
		pieces = slackmd.Split(md, min(limit, slackmd.MaxPieceChars))
	}
	var out []Message
	for i, p := range pieces {
		var extra []slack.Block
		if i == len(pieces)-1 {
			extra = tail
		}
		if Runes(p)+BlocksText(extra) > MaxMessageText { // the tail would not fit with this piece
			out = append(out, Message{Text: p})
			p, extra = tailNote, tail
		}
		out = append(out, Message{Text: p, Extra: extra})
	}
	return out
}

// actionBlocks puts buttons in actions blocks of MaxButtons each, with
// block ids prefix-0, prefix-1…
func actionBlocks(prefix string, buttons []slack.BlockElement) []slack.Block {
	var blocks []slack.Block
	for i := 0; i < len(buttons); i += MaxButtons {
		end := min(i+MaxButtons, len(buttons))
		blocks = append(blocks, slack.NewActionBlock(fmt.Sprintf("%s-%d", prefix, i/MaxButtons), buttons[i:end]...))
	}
	return blocks
}

// hint is a context block of mrkdwn text.
func hint(id, text string) slack.Block {
	return slack.NewContextBlock(id, slack.NewTextBlockObject(slack.MarkdownType, text, false, false))
}

// section is a section block of mrkdwn text.
func section(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, text, false, false), nil, nil)
}

// header is a header block.
func header(text string) slack.Block {
	return slack.NewHeaderBlock(slack.NewTextBlockObject(slack.PlainTextType, text, false, false))
}
