package main

import (
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/transcript"
)

// v1Data copies storage/bolt/testdata/v1 (a data folder written by the schema 1
// code, whose records name the bundles under /work/main) into the chat's
// data folder.
func v1Data(t *testing.T, vars map[string]string) {
	t.Helper()
	fixtures.CopyDir(t, filepath.Join("..", "..", "storage", "bolt", "testdata", "v1"), vars["AGENTBOT_DATA"])
}

// A session stored by the old format resumes with today's bundles, found
// elsewhere on disk than the recorded host path: the model gets the old
// transcript and the new line.
func TestChatResumesAV1Session(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	if strings.HasPrefix(vars["AGENTBOT_BUNDLES"], "/work/main/") {
		t.Skip("the bundles are where the v1 data recorded them; the test would not move them")
	}
	v1Data(t, vars)
	fm.Enqueue(fakemodel.Reply{Text: "Noted: returning shoppers come first."})
	r := runCmd(t, vars, "Make it for returning shoppers\n", "chat", "--session", "lgjnajbfftn7e")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "Your brief is saved as product-brief.md.") // the last answer, on resume
	contains(t, "stdout", r.stdout, "Noted: returning shoppers come first.")
	reqs := fm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	msgs := sentMessages(t, reqs[0])
	var brief, saved, calls bool
	for _, m := range msgs {
		brief = brief || (m.Role == transcript.RoleUser && strings.HasPrefix(m.Content, "*brief"))
		saved = saved || (m.Role == transcript.RoleTool && strings.Contains(m.Content, "product-brief.md"))
		for _, tc := range m.ToolCalls {
			calls = calls || tc.Function.Name == "save_output"
		}
	}
	if len(msgs) < 12 || msgs[0].Role != transcript.RoleSystem || !brief || !saved || !calls {
		t.Fatalf("the request lacks the old transcript (brief %v, save_output call %v, result %v): %d messages", brief, calls, saved, len(msgs))
	}
	if last := msgs[len(msgs)-1]; last.Role != transcript.RoleUser || last.Content != "Make it for returning shoppers" {
		t.Fatalf("the request ends with %+v, want the new line", last)
	}
	if err := fakemodel.ValidateTranscript(msgs); err != nil {
		t.Fatalf("the resumed request is invalid: %v", err)
	}
}

// A stored session whose agent is no longer installed is refused with a
// message that names the agent and says what to do.
func TestChatSessionWithAGoneAgent(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	v1Data(t, vars)
	vars["AGENTBOT_BUNDLES"] = writeMine(t, t.TempDir()) // its product-lead is another agent
	r := runCmd(t, vars, "hello\n", "chat", "--session", "lgjnajbfftn7e")
	r.wantCode(t, 1)
	for _, want := range []string{"Maren", "product-lead", "no longer installed", "start a new thread", "/agent use"} {
		contains(t, "stderr", r.stderr, want)
	}
	if fm.Calls() != 0 {
		t.Fatalf("%d model calls for a session that cannot resume", fm.Calls())
	}
}
