package export

import (
	"strings"
	"testing"
	"time"

	"agentbot/engine/transcript"
)

// The audit table holds the digest and size of a call, never its
// arguments or result; a user's menu pick splits from the runtime's note.
func TestAuditTableAndNotes(t *testing.T) {
	rec := transcript.ToolRecord{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tool: "jira__create", Server: "jira", CallID: "c1",
		Outcome: transcript.OutcomeOK, Approver: "U1", DurationMS: 12, ResultBytes: 34, ArgsDigest: "sha256:ab"}
	table := AuditTable([]transcript.ToolRecord{rec})
	if !strings.Contains(table, "| 2026-01-02 03:04:05 | jira__create | jira | c1 | ok | U1 | 12 | 34 | sha256:ab |") {
		t.Fatalf("table:\n%s", table)
	}
	user, note := splitRuntimeNote("*brief\n\n(The user picked menu item 1: *brief.)")
	if user != "*brief" || !strings.HasPrefix(note, menuPickStart) || !IsRuntimeNote("(Runtime: stop)") || IsRuntimeNote("hello") {
		t.Fatalf("split %q / %q", user, note)
	}
}
