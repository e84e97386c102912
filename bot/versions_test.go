package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// TestUploadAndHandoffNameTheProjectVersion: a document's upload label
// and the handoff name the project's version of it, which counts every
// thread's saves, not the saving session's own count: Bruno's first save
// of a document Anna saved before is its v2, in the upload's title, its
// comment, and what the next agent hears.
func TestUploadAndHandoffNameTheProjectVersion(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "analyst"); err != nil {
		t.Fatal(err)
	}
	r.model.Enqueue(saveCall("{planning_artifacts}/prd.md", "# PRD\nv1\n"), fakemodel.Reply{Text: "Saved the first PRD."})
	t1, _ := r.mention("write the PRD", "")
	r.waitUpload(t1, "prd.md")

	// Another thread of the channel (the same project) reads it, then
	// saves the next version: its first save, the project's second.
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{planning_artifacts}/prd.md"})}},
		saveCall("{planning_artifacts}/prd.md", "# PRD\nv2\n"),
		fakemodel.Reply{Text: "Saved the second PRD. Shall I go on?"})
	t2, _ := r.mention("improve the PRD", "")
	r.waitUpload(t2, "prd.md")
	var up2 string
	for _, u := range r.slack.Uploads() {
		if u.ThreadTS == t2 {
			if u.Title != "prd.md, v2" {
				t.Errorf("upload title = %q, want the project's version, v2", u.Title)
			}
			up2 = u.InitialComment
		}
	}
	has(t, up2, "(v2,", "the upload's comment")

	// The next agent of the thread hears the project's version too.
	r.reply("use pm", t2)
	r.waitFor("the PM's greeting", func() bool {
		for _, m := range r.botMessages(t2) {
			if strings.Contains(text(m), "John") {
				return true
			}
		}
		return false
	})
	r.model.Enqueue(fakemodel.Reply{Text: "Hello from the PM."})
	calls := r.model.Calls()
	r.reply("what do we have?", t2)
	r.waitCalls(calls + 1)
	system := r.model.Requests()[calls].Messages[0].Content
	has(t, system, "/outputs/planning-artifacts/prd.md (v2)", "the PM's handoff")
}
