// Package keys builds and parses the keys of package bot: the session key
// of a Slack thread, and the dedupe keys of what intake admits. Nothing
// else builds or parses them.
package keys

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Thread names a Slack thread: the workspace, the channel, and the ts of
// the thread's first message. Its String is the key of the thread's
// session and queue in the store.
type Thread struct {
	Team, Channel, Thread string
}

// String is the thread's session key, "team/channel/thread".
func (k Thread) String() string {
	return k.Team + "/" + k.Channel + "/" + k.Thread
}

// ParseThread reads a session key written by Thread.String; a key of
// another shape (the terminal's "chat/NAME") is not a thread's.
func ParseThread(key string) (Thread, bool) {
	parts := strings.SplitN(key, "/", 3)
	if len(parts) != 3 {
		return Thread{}, false
	}
	return Thread{Team: parts[0], Channel: parts[1], Thread: parts[2]}, true
}

// DM reports whether the thread is in a direct message with the bot.
func (k Thread) DM() bool { return strings.HasPrefix(k.Channel, "D") }

// The dedupe keys of admitted items: the first item admitted under a key
// is queued, later ones are dropped.

// Message is the dedupe key of a Slack message: app_mention and
// message.* both fire for one message, with the same channel and ts.
func Message(channel, ts string) string {
	return "msg/" + channel + "/" + ts
}

// Event is the dedupe key of an Events API delivery: Slack retries an
// event with the same event_id.
func Event(eventID string) string { return "event/" + eventID }

// Approval is the dedupe key of a decision on a call of the session of
// key: the first click (or expiry) queued wins.
func Approval(key, callID string) string {
	return "approval/" + key + "/" + CallDigest(callID)
}

// CallDigest is "sha256:" and the first 32 hex digits of the call id's
// SHA-256: what names a call whose id is too long for a button's value.
func CallDigest(callID string) string {
	sum := sha256.Sum256([]byte(callID))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

// Request is the dedupe key of one signed HTTP request from Slack, by
// what names its delivery (slackhttp.Request.Key: its timestamp,
// signature and retry number): the same request replayed has the same key.
func Request(delivery string) string { return "request/" + delivery }
