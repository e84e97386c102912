package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// TestPeopleNamedByDisplayName: wherever a person is named to the model
// they are named as Slack calls them (users.info), never by their raw
// user id, which the agent would repeat to people: the refusal of a save
// on a version the session has not seen, bmad-help's list of the
// project's documents, and the handoff of a thread that switches agents.
func TestPeopleNamedByDisplayName(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "analyst"); err != nil {
		t.Fatal(err)
	}
	anna, bruno := slack.User{ID: "U0ANNA", Name: "anna.k"}, slack.User{ID: "U0BRUNO", Name: "bruno.m"}
	anna.Profile.DisplayName, bruno.Profile.DisplayName = "Anna", "Bruno"
	r.slack.AddUser(anna)
	r.slack.AddUser(bruno)
	mention := func(who, text, thread string) string {
		ts := r.slack.NextTS()
		r.slack.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: who, Channel: channel,
			Text: "<@" + r.slack.BotUserID() + "> " + text, TimeStamp: ts, ThreadTimeStamp: thread})
		return ts
	}
	r.model.Enqueue(saveCall("{planning_artifacts}/prd.md", "# PRD\nAnna's\n"), fakemodel.Reply{Text: "Saved."})
	t1 := mention(anna.ID, "write the PRD", "")
	r.waitUpload(t1, "prd.md")

	// Bruno's thread saves without reading Anna's version: refused, naming
	// her.
	r.model.Enqueue(saveCall("{planning_artifacts}/prd.md", "# PRD\nBruno's\n"), fakemodel.Reply{Text: "Someone changed it."})
	calls := r.model.Calls()
	t2 := mention(bruno.ID, "write the PRD too", "")
	r.waitCalls(calls + 2)
	refusal := r.lastToolResult()
	has(t, refusal, "saved by Anna with analyst", "the stale save's refusal")
	hasNot(t, refusal, anna.ID, "the stale save's refusal")

	// bmad-help's view of the project names her too.
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "bmad-help"})}},
		fakemodel.Reply{Text: "Next: architecture."})
	calls = r.model.Calls()
	mention(bruno.ID, "what's next?", t2)
	r.waitCalls(calls + 2)
	var help map[string]any
	if err := json.Unmarshal([]byte(r.lastToolResult()), &help); err != nil {
		t.Fatal(err)
	}
	state := fmt.Sprint(help["project_documents"])
	has(t, state, "prd.md v1 Anna with analyst", "bmad-help's documents")
	hasNot(t, state, anna.ID, "bmad-help's documents")

	// Bruno hands his thread to the PM: the handoff names him.
	mention(bruno.ID, "use pm", t2)
	r.waitFor("the PM's greeting", func() bool {
		for _, m := range r.botMessages(t2) {
			if strings.Contains(text(m), "John") {
				return true
			}
		}
		return false
	})
	r.model.Enqueue(fakemodel.Reply{Text: "Hello."})
	calls = r.model.Calls()
	mention(bruno.ID, "what do we have?", t2)
	r.waitCalls(calls + 1)
	system := r.model.Requests()[calls].Messages[0].Content
	has(t, system, "worked in this thread with Bruno.", "the PM's handoff")
	hasNot(t, system, bruno.ID, "the PM's handoff")
}
