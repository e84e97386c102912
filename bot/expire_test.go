package bot

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"agentbot/engine/transcript"
)

// A waiting session whose key names no thread is logged and skipped by the
// expiry, not a panic of the periodic loop; nothing is queued (the bot has
// no store here: a queued item would panic).
func TestExpireMalformedKey(t *testing.T) {
	var logs bytes.Buffer
	b := &sweeper{core: &core{log: slog.New(slog.NewTextHandler(&logs, nil))}}
	b.expire(&transcript.Session{ID: "s1", Key: "no-thread"}, transcript.Approval{CallID: "c1", Asked: time.Now()})
	if !strings.Contains(logs.String(), "names no thread") || !strings.Contains(logs.String(), "s1") {
		t.Fatalf("log: %q", logs.String())
	}
}
