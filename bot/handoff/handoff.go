// Package handoff writes what an agent reads of a Slack thread's earlier
// talk when it is called into the thread (the engine's Session.Handoff):
// the people's messages before the mention, with their authors and the
// names of the files they shared, within a budget.
package handoff

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"agentbot/bot/webapi"
)

// MaxBytes bounds the earlier messages of a thread the bot reads into a
// session's first turn (bytes of text; the newest are kept).
const MaxBytes = 12 << 10

// Text is what a thread held before the bot was first called into it: of
// msgs (the thread's messages), those of people before cutoff (the
// mention's ts), oldest first, within MaxBytes (Fit). name names a user
// ("" when unknown). It is "" when the bot (botID, botUserID) spoke in the
// thread before (a switch of agents hands over instead) or no one wrote
// before.
func Text(msgs []slack.Message, cutoff, botID, botUserID string, name func(user string) string) string {
	var lines []string
	for _, m := range msgs {
		switch {
		case m.Timestamp >= cutoff:
			continue // the mention and what came after
		case m.BotID != "" && (m.BotID == botID || m.User == botUserID):
			return "" // the bot was here before
		case m.BotID != "" || m.User == "" || !webapi.PersonSubtype(m.SubType):
			continue // other bots' messages, and events; a file_share is a person's
		}
		lines = append(lines, Line(name(m.User), m))
	}
	return Fit(lines)
}

// Line is one earlier message: its author (name, "" when unknown), its
// text (a long one cut to a quarter of the budget), its files.
func Line(name string, m slack.Message) string {
	if name == "" {
		name = "<@" + m.User + ">"
	} else {
		name += " (<@" + m.User + ">)"
	}
	body := strings.TrimSpace(m.Text)
	if max := MaxBytes / 4; len(body) > max {
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

// Fit joins the lines within MaxBytes: the newest that fit in seven
// eighths of it, and, when earlier ones are left out, the thread's opening
// message if it fits in the last eighth, with a count of what was left
// out.
func Fit(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	size, from := 0, len(lines)
	for from > 0 && size+len(lines[from-1])+1 <= MaxBytes*7/8 {
		from--
		size += len(lines[from]) + 1
	}
	kept := lines[from:]
	switch {
	case from == 1 && len(lines[0]) <= MaxBytes/8:
		kept = append([]string{lines[0]}, kept...)
	case from > 1 && len(lines[0]) <= MaxBytes/8:
		kept = append([]string{lines[0], fmt.Sprintf("(… %d messages left out …)", from-1)}, kept...)
	case from > 0:
		kept = append([]string{fmt.Sprintf("(… %d earlier messages left out …)", from)}, kept...)
	}
	return "You were just called into a Slack thread where people were already talking. Their messages before yours, oldest first:\n" +
		strings.Join(kept, "\n") + "\n(End of the earlier messages.)"
}
