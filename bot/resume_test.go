package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine/transcript"
	"agentbot/storage"
)

// A thread whose session's agent is no longer installed gets a message
// that names the agent and says what to do; no model call is made.
func TestThreadWithAGoneAgent(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	thread := r.slack.NextTS()
	rec, err := r.st.NewSession(ctx, r.sessionKey(thread))
	if err != nil {
		t.Fatal(err)
	}
	rec.AgentID = "ghost"
	rec.Agent = &transcript.AgentSnapshot{ID: "ghost", Name: "Casper", Icon: "👻", Source: "bundle", Module: "gone-team"}
	rec.Meta = map[string]string{"bot.owner": user}
	rec.Messages = []transcript.Message{
		{Role: transcript.RoleSystem, Content: "You are Casper."},
		{Role: transcript.RoleUser, Content: "hello"},
		{Role: transcript.RoleAssistant, Content: "Boo."},
	}
	if err := r.st.SaveSession(ctx, rec); err != nil {
		t.Fatal(err)
	}
	r.mention("are you there?", thread)
	r.waitText(thread, "no longer installed")
	var msg string
	for _, m := range r.botMessages(thread) {
		if s := text(m); strings.Contains(s, "no longer installed") {
			msg = s
		}
	}
	for _, want := range []string{"👻 Casper", "ghost", "start a new thread", "/agent use"} {
		has(t, msg, want, "the gone-agent message")
	}
	if n := r.model.Calls(); n != 0 {
		t.Fatalf("%d model calls for a thread whose agent is gone", n)
	}
	// The session is kept as it was.
	got, err := r.st.SessionByID(ctx, rec.ID)
	if err != nil || len(got.Messages) != 3 || got.AgentID != "ghost" {
		t.Fatalf("stored session after the refusal: %v, %+v", err, got)
	}

	// "use <agent>" moves the thread to an installed agent; the old
	// session is kept, detached.
	r.mention("use product-lead", thread)
	r.waitText(thread, "Maren")
	now, err := storage.Session(ctx, r.st, r.sessionKey(thread))
	if err != nil || now.ID == rec.ID || now.AgentID != "product-lead" {
		t.Fatalf("thread session after use: %v, %+v", err, now)
	}
	if old, err := r.st.SessionByID(ctx, rec.ID); err != nil || len(old.Messages) != 3 {
		t.Fatalf("the old session was not kept: %v", err)
	}
}
