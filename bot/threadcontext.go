package bot

import (
	"context"

	"agentbot/bot/handoff"
	"agentbot/bot/webapi"
	"agentbot/engine/transcript"
)

// threadContext is what a thread held before the bot was first called
// into it (handoff.Text): the people's messages before the mention (or the
// picker). The agent gets it with its activation (Session.Handoff). It is
// "" when the session has had a turn, the mention starts the thread, the
// bot spoke in the thread before, or no one wrote before.
func (b *core) threadContext(ctx context.Context, s *transcript.Session, it item) string {
	cutoff := contextCutoff(it)
	if cutoff == "" || hasUserMessage(s) {
		return ""
	}
	msgs, err := webapi.Replies(ctx, b.web(), it.Channel, it.ThreadTS)
	if err != nil {
		b.log.Warn("conversations.replies", "err", err)
		return ""
	}
	me := b.self(ctx)
	return handoff.Text(msgs, cutoff, me.BotID, me.BotUserID, func(user string) string { return b.userName(ctx, user) })
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

// hasUserMessage reports whether the session has had a person's message.
func hasUserMessage(s *transcript.Session) bool {
	for _, m := range s.Messages {
		if m.Role == transcript.RoleUser {
			return true
		}
	}
	return false
}
