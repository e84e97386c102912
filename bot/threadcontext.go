package bot

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"agentbot/engine/transcript"
)

// maxThreadContext bounds the earlier messages of a thread the bot reads
// into a session's first turn (bytes of text; the newest are kept).
const maxThreadContext = 12 << 10

// threadContext is what a thread held before the bot was first called
// into it: the people's messages before the mention (or the picker), with
// their authors and the names of the files they shared, oldest first,
// within maxThreadContext (the newest kept; the first message too when it
// fits). The agent gets it with its activation (Session.Handoff). It is
// "" when the session has had a turn, the mention starts the thread, the
// bot spoke in the thread before (a switch of agents hands over instead),
// or no one wrote before.
func (b *Bot) threadContext(ctx context.Context, s *transcript.Session, it item) string {
	cutoff := contextCutoff(it)
	if cutoff == "" || hasUserMessage(s) {
		return ""
	}
	msgs, err := b.threadReplies(ctx, it)
	if err != nil {
		b.log.Warn("conversations.replies", "err", err)
		return ""
	}
	var lines []string
	for _, m := range msgs {
		switch {
		case m.Timestamp >= cutoff:
			continue // the mention and what came after
		case m.BotID != "" && (m.BotID == b.botID || m.User == b.botUserID):
			return "" // the bot was here before
		case m.BotID != "" || m.User == "" || m.SubType != "":
			continue // other bots' messages, and events
		}
		lines = append(lines, b.contextLine(ctx, m))
	}
	return fitContext(lines)
}

// contextCutoff is the time before which a thread's messages are its
// earlier talk: the mention's (or the picker's); "" when there is none to
// read (a DM, or the message that starts the thread).
func contextCutoff(it item) string {
	cutoff := it.TS
	if it.Kind == kindPick {
		cutoff = it.PickerTS
	}
	if it.DM || it.ThreadTS == "" || cutoff == it.ThreadTS {
		return ""
	}
	return cutoff
}

// threadReplies reads a thread's messages, at most 10 pages of 200.
func (b *Bot) threadReplies(ctx context.Context, it item) ([]slack.Message, error) {
	var msgs []slack.Message
	cursor := ""
	for range 10 {
		var page []slack.Message
		err := b.call(ctx, func() (err error) {
			page, _, cursor, err = b.cfg.API.GetConversationRepliesContext(ctx, &slack.GetConversationRepliesParameters{
				ChannelID: it.Channel, Timestamp: it.ThreadTS, Cursor: cursor, Limit: 200})
			return err
		})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, page...)
		if cursor == "" {
			break
		}
	}
	return msgs, nil
}

// contextLine is one earlier message: its author, its text (a long one
// cut to a quarter of the budget), its files.
func (b *Bot) contextLine(ctx context.Context, m slack.Message) string {
	name := b.userName(ctx, m.User)
	if name == "" {
		name = "<@" + m.User + ">"
	} else {
		name += " (<@" + m.User + ">)"
	}
	body := strings.TrimSpace(m.Text)
	if max := maxThreadContext / 4; len(body) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + fmt.Sprintf(" … (cut: %d more bytes)", len(body)-cut)
	}
	line := name + ": " + body
	if len(m.Files) > 0 {
		var files []string
		for _, f := range m.Files {
			files = append(files, f.Name)
		}
		line += " [shared files: " + strings.Join(files, ", ") + "]"
	}
	return line
}

// fitContext joins the lines within maxThreadContext: the newest that
// fit in seven eighths of it, and, when earlier ones are left out, the
// thread's opening message if it fits in the last eighth, with a count of
// what was left out.
func fitContext(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	size, from := 0, len(lines)
	for from > 0 && size+len(lines[from-1])+1 <= maxThreadContext*7/8 {
		from--
		size += len(lines[from]) + 1
	}
	kept := lines[from:]
	switch {
	case from == 1 && len(lines[0]) <= maxThreadContext/8:
		kept = append([]string{lines[0]}, kept...)
	case from > 1 && len(lines[0]) <= maxThreadContext/8:
		kept = append([]string{lines[0], fmt.Sprintf("(… %d messages left out …)", from-1)}, kept...)
	case from > 0:
		kept = append([]string{fmt.Sprintf("(… %d earlier messages left out …)", from)}, kept...)
	}
	return "You were just called into a Slack thread where people were already talking. Their messages before yours, oldest first:\n" +
		strings.Join(kept, "\n") + "\n(End of the earlier messages.)"
}

// hasUserMessage reports whether the session has had a person's message.
func hasUserMessage(s *transcript.Session) bool {
	for _, m := range s.Messages {
		if m.Role == transcript.RoleUser {
			return true
		}
	}
	return false
}
