package bot

import (
	"strings"

	"agentbot/bot/view"
)

// Keys: the session key of a thread, and the dedupe keys of what intake
// admits. Nothing else builds or parses them.

// threadKey names a Slack thread: the workspace, the channel, and the ts of
// the thread's first message. Its String is the key of the thread's session
// and queue in the store; nothing else builds or parses that key.
type threadKey struct {
	Team, Channel, Thread string
}

// String is the thread's session key, "team/channel/thread".
func (k threadKey) String() string {
	return k.Team + "/" + k.Channel + "/" + k.Thread
}

// parseThreadKey reads a session key written by threadKey.String; a key of
// another shape (the terminal's "chat/NAME") is not a thread's.
func parseThreadKey(key string) (threadKey, bool) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return threadKey{}, false
	}
	return threadKey{Team: parts[0], Channel: parts[1], Thread: parts[2]}, true
}

// dm reports whether the thread is in a direct message with the bot.
func (k threadKey) dm() bool { return strings.HasPrefix(k.Channel, "D") }

// The dedupe keys of admitted items: the first item admitted under a key
// is queued, later ones are dropped.

// msgDedupe is the dedupe key of a Slack message: app_mention and
// message.* both fire for one message, with the same channel and ts.
func msgDedupe(channel, ts string) string {
	return "msg/" + channel + "/" + ts
}

// eventDedupe is the dedupe key of an Events API delivery: Slack retries
// an event with the same event_id.
func eventDedupe(eventID string) string { return "event/" + eventID }

// approvalDedupe is the dedupe key of a decision on a call of the session
// of key: the first click (or expiry) queued wins.
func approvalDedupe(key, callID string) string {
	return "approval/" + key + "/" + view.CallDigest(callID)
}
