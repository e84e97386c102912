package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// A thread whose first turn failed (the model refused the key) keeps its
// session and agent, and a retry message just works: the failed turn is
// closed first, so the model never gets two user messages in a row,
// though the thread's conversation is opened afresh for each message.
func TestFirstTurnFailedThenRetryWorks(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`})
	thread, _ := r.mention("plan the launch", "")
	r.waitFor("the error", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "⚠️") {
				return true
			}
		}
		return false
	})
	r.model.Enqueue(fakemodel.Reply{Text: "Launch plan, step one."})
	r.reply("plan the launch, please", thread)
	r.waitFor("the answer", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "Launch plan, step one.") {
				return true
			}
		}
		return false
	})
	reqs := r.model.Requests()
	last := reqs[len(reqs)-1]
	if last.LastUserText() != "plan the launch, please" {
		t.Fatalf("the retry sent %q", last.LastUserText())
	}
	for i := 1; i < len(last.Messages); i++ {
		if last.Messages[i].Role == "user" && last.Messages[i-1].Role == "user" {
			t.Fatalf("two user messages in a row at %d: %q then %q", i, last.Messages[i-1].Content, last.Messages[i].Content)
		}
	}
	list, err := r.st.ListSessions(ctx)
	if err != nil || len(list) != 1 || list[0].AgentID != "product-lead" {
		t.Fatalf("sessions after the retry: %+v, %v", list, err)
	}
}
