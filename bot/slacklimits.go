package bot

import (
	"context"
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"agentbot/bot/slackmd"
	"agentbot/engine/catalog"
)

// Slack's limits on what the bot builds, each kept where blocks are built.
const (
	// maxMessageText is the block text one message carries: Slack refuses
	// msg_blocks_too_long past about 12,000 characters of text in all
	// blocks together (slackapi/bolt-js#2509); we keep a margin.
	maxMessageText = 11_000
	// maxButtonLabel is a button's text: Slack allows 75 characters
	// (https://docs.slack.dev/reference/block-kit/block-elements/button-element).
	maxButtonLabel = 70
	// maxPickerButtons is how many agents the picker offers as buttons (four
	// actions blocks, some 7,000 characters of labels); the rest are named
	// by /agent list. A greeting's menu has as many buttons at most; the
	// rest are in its text, to type.
	maxPickerButtons = 100
	// maxHomeBlocks is a Home tab's blocks (Slack allows 100 in a view:
	// https://docs.slack.dev/reference/block-kit/blocks).
	maxHomeBlocks = 100
	// maxSectionText is a section's text (3,000 characters:
	// https://docs.slack.dev/reference/block-kit/blocks/section-block).
	maxSectionText = 3000
)

// runes counts the characters Slack counts.
func runes(s string) int { return utf8.RuneCountInString(s) }

// buttonLabel cuts label to fit a button, keeping suffix whole.
func buttonLabel(label, suffix string) string {
	return shorten(label, maxButtonLabel-runes(suffix)) + suffix
}

// agentLabels labels agents for buttons: icon, name and title, followed,
// where several agents show the same persona, by what tells them apart
// (personaOrigins).
func agentLabels(agents []*catalog.Agent) []string {
	origins := personaOrigins(agents)
	out := make([]string, len(agents))
	for i, a := range agents {
		suffix := ""
		if origins[i] != "" {
			suffix = " (" + origins[i] + ")"
		}
		out[i] = buttonLabel(persona(a), suffix)
	}
	return out
}

// persona is how an agent shows itself: icon, name and title.
func persona(a *catalog.Agent) string {
	label := a.Name
	if a.Icon != "" {
		label = a.Icon + " " + label
	}
	if a.Title != "" && a.Title != a.Name {
		label += " — " + a.Title
	}
	return label
}

// personaOrigins tells apart agents that show the same persona (one BMAD
// agent in several installs and modules): for each, "" when its persona
// is unique, else its module and install (agentOrigin), or its id where
// even those repeat.
func personaOrigins(agents []*catalog.Agent) []string {
	seen := map[string]int{}
	for _, a := range agents {
		seen[persona(a)]++
	}
	origins := make([]string, len(agents))
	again := map[string]int{}
	for i, a := range agents {
		if seen[persona(a)] > 1 {
			origins[i] = agentOrigin(a)
			again[persona(a)+"\x00"+origins[i]]++
		}
	}
	for i, a := range agents {
		if origins[i] != "" && again[persona(a)+"\x00"+origins[i]] > 1 {
			origins[i] = a.ID
		}
	}
	return origins
}

// agentOrigin names where an agent comes from: its module and, for BMAD,
// the install (the folder holding it).
func agentOrigin(a *catalog.Agent) string {
	origin := a.Module
	if a.Home != nil && a.Home.Kind == "bmad" && a.Home.ProjectRoot != "" {
		if origin != "" {
			origin += " · "
		}
		origin += filepath.Base(a.Home.ProjectRoot)
	}
	if origin == "" {
		return a.ID
	}
	return origin
}

// blocksText counts the text of blocks as Slack does for
// msg_blocks_too_long: every text object and markdown block.
func blocksText(blocks []slack.Block) int {
	n := 0
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.MarkdownBlock:
			n += runes(b.Text)
		case *slack.SectionBlock:
			if b.Text != nil {
				n += runes(b.Text.Text)
			}
		case *slack.ActionBlock:
			for _, e := range b.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.Text != nil {
					n += runes(btn.Text.Text)
				}
			}
		case *slack.ContextBlock:
			for _, e := range b.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					n += runes(t.Text)
				}
			}
		}
	}
	return n
}

// postMarkdownWith posts markdown text followed by tail blocks (buttons, a
// hint) within Slack's limits: one message when it all fits, otherwise the
// text split into messages of its own (slackmd.Split) and tail with the
// last piece, or alone (under tailNote) when even that is too long. When
// Slack refuses a message, the thread gets its text as plain text.
func (b *Bot) postMarkdownWith(ctx context.Context, channel, thread, md, tailNote string, tail []slack.Block) error {
	tailText := blocksText(tail)
	pieces := []string{md}
	if runes(md)+tailText > maxMessageText {
		// The last piece makes room for the tail, unless the tail is so long
		// that it is better alone.
		limit := maxMessageText - tailText
		if limit < slackmd.MaxPieceChars/2 {
			limit = slackmd.MaxPieceChars
		}
		pieces = slackmd.Split(md, min(limit, slackmd.MaxPieceChars))
	}
	for i, p := range pieces {
		blocks := []slack.Block{slackmd.Block(p)}
		if i == len(pieces)-1 {
			blocks = append(blocks, tail...)
		}
		if blocksText(blocks) > maxMessageText { // the tail would not fit with this piece
			if err := b.postMarkdownPiece(ctx, channel, thread, p, nil); err != nil {
				return err
			}
			p, blocks = tailNote, append([]slack.Block{slackmd.Block(tailNote)}, tail...)
		}
		if err := b.postMarkdownPiece(ctx, channel, thread, p, blocks[1:]); err != nil {
			return err
		}
	}
	return nil
}

// postMarkdownPiece posts one markdown piece with extra blocks, falling back
// to the piece as plain text when Slack refuses the blocks.
func (b *Bot) postMarkdownPiece(ctx context.Context, channel, thread, piece string, extra []slack.Block) error {
	blocks := append([]slack.Block{slackmd.Block(piece)}, extra...)
	_, err := b.postMsg(ctx, channel, thread,
		slack.MsgOptionText(slackmd.EscapeText(slackmd.Fallback(piece, slackmd.DefaultFallbackChars)), false),
		slack.MsgOptionBlocks(blocks...))
	if err == nil {
		return nil
	}
	if _, perr := b.postMsg(ctx, channel, thread, slack.MsgOptionText(slackmd.EscapeText(piece), false)); perr != nil {
		return fmt.Errorf("post %d characters: %w (plain text: %w)", runes(piece), err, perr)
	}
	return nil
}
