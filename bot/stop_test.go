package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// stopCase starts a turn that will hang in its second model call (after a
// tool ran) or while streaming its first answer, stops it with stop, and
// checks: the turn ends, its late answer is never posted, the transcript
// records the stop, and the next message continues from there.
func stopCase(t *testing.T, firstReplies []fakemodel.Reply, stop func(r *rig, thread string)) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(firstReplies...)
	thread, _ := r.mention("draft the brief", "")
	r.waitFor("the model call that will be stopped", func() bool { return r.model.Calls() == len(firstReplies) })
	stop(r, thread)
	r.waitText(thread, "Stopped by <@"+user+">")
	time.Sleep(300 * time.Millisecond) // the late answer would arrive now
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "LATE ANSWER") {
			t.Fatalf("the stopped turn's late answer was posted: %q", text(m))
		}
	}
	for _, s := range r.slack.Streams() {
		if strings.Contains(s.Text, "LATE ANSWER") {
			t.Fatal("the late answer was streamed")
		}
	}
	sess, err := r.st.FindSession(ctx, r.slack.TeamID()+"/"+channel+"/"+thread)
	if err != nil || sess == nil {
		t.Fatal(err)
	}
	last := sess.Messages[len(sess.Messages)-1]
	if last.Role != "assistant" || !strings.Contains(last.Content, "The user stopped this turn") {
		t.Fatalf("the transcript does not record the stop: %+v", last)
	}
	r.model.Enqueue(fakemodel.Reply{Text: "Picking up where we left off."})
	r.reply("go on with the problem statement", thread)
	r.waitText(thread, "Picking up where we left off.")
	reqs := r.model.Requests()
	next := reqs[len(reqs)-1]
	if err := fakemodel.ValidateHistory(next.Messages); err != nil {
		t.Fatalf("the next request is invalid: %v", err)
	}
	if !strings.Contains(string(next.Raw), "The user stopped this turn") {
		t.Fatal("the next request lacks the stop")
	}
	var processing, active bool
	for _, c := range r.slack.CallsTo("agents.sessions.setStatus") {
		processing = processing || c.Form.Get("status") == "processing"
		active = active || c.Form.Get("status") == "active"
	}
	if !processing || !active {
		t.Fatal("the agent session was not shown as processing, then active")
	}
}

// "@agentbot stop" between two model calls (a tool ran, the next call hangs).
func TestStopBetweenModelCalls(t *testing.T) {
	stopCase(t, []fakemodel.Reply{
		{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}},
		{Text: "LATE ANSWER", Delay: 3 * time.Second},
	}, func(r *rig, thread string) { r.mention("stop", thread) })
}

// Slack's native stop button (agent_session_stopped) while the answer
// streams.
func TestStopWhileStreaming(t *testing.T) {
	stopCase(t, []fakemodel.Reply{{Text: "Here is my draft. " + strings.Repeat("words ", 60) + "LATE ANSWER", Chunks: 10, ChunkDelay: 300 * time.Millisecond}},
		func(r *rig, thread string) {
			r.slack.SendEvent(map[string]any{"type": "agent_session_stopped", "channel": channel, "thread_ts": thread, "user": user})
		})
}
