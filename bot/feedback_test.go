package bot_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/bot/metrics"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

var _ bot.Observer = (*metrics.Metrics)(nil) // it counts feedback clicks

// feedbackButtons returns the action id and the button values of the
// feedback_buttons element in blocks, if any.
func feedbackButtons(t testing.TB, blocks json.RawMessage) (actionID string, values []string) {
	t.Helper()
	if len(blocks) == 0 {
		return "", nil
	}
	var list []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Positive struct {
				Value string `json:"value"`
			} `json:"positive_button"`
			Negative struct {
				Value string `json:"value"`
			} `json:"negative_button"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(blocks, &list); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	for _, b := range list {
		for _, e := range b.Elements {
			if b.Type == "context_actions" && e.Type == "feedback_buttons" {
				return e.ActionID, []string{e.Positive.Value, e.Negative.Value}
			}
		}
	}
	return "", nil
}

// Final answers carry Slack's feedback buttons, streamed or posted; errors
// and greetings do not.
func TestFeedbackButtonsOnFinalAnswers(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "A streamed answer."})
	thread, _ := r.mention("question one", "")
	r.waitFor("the answer", func() bool { ss := r.slack.Streams(); return len(ss) == 1 && ss[0].Stopped })
	st := r.slack.Streams()[0]
	if id, vals := feedbackButtons(t, st.StopBlocks); id != "feedback" || len(vals) != 2 || vals[0] != "positive" || vals[1] != "negative" {
		t.Fatalf("streamed answer's feedback = %q %v (blocks %s)", id, vals, st.StopBlocks)
	}
	if m, _ := r.slack.Message(channel, st.TS); !strings.Contains(string(m.Blocks), "feedback_buttons") {
		t.Fatalf("the stream message lacks the buttons: %s", m.Blocks)
	}
	if id, _ := feedbackButtons(t, r.botMessages(thread)[0].Blocks); id != "" {
		t.Fatal("the greeting carries feedback buttons")
	}

	// A failed turn's message carries none.
	r.model.Enqueue(fakemodel.Reply{Status: 400, ErrorBody: `{"error":{"message":"nope","type":"invalid_request_error"}}`})
	r.reply("question two", thread)
	r.waitText(thread, "⚠️")
	for _, m := range r.botMessages(thread) {
		if strings.Contains(text(m), "⚠️") {
			if id, _ := feedbackButtons(t, m.Blocks); id != "" {
				t.Fatal("an error carries feedback buttons")
			}
		}
	}
}

// Without streaming the posted answer's last message carries them.
func TestFeedbackButtonsOnPostedAnswer(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.NoStreaming = true }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "A posted answer."})
	thread, _ := r.mention("question", "")
	r.waitText(thread, "A posted answer.")
	msgs := r.botMessages(thread)
	last := msgs[len(msgs)-1]
	if id, _ := feedbackButtons(t, last.Blocks); id != "feedback" || last.MarkdownText() != "A posted answer." {
		t.Fatalf("posted answer = %q, blocks %s", last.MarkdownText(), last.Blocks)
	}
}

// A click is stored with the session and the answer's message, survives
// restarts (before and after the click), and is counted per agent and
// workflow; a second click of the same person on the same answer replaces
// the first.
func TestFeedbackStoredAcrossRestartAndCounted(t *testing.T) {
	ctx := context.Background()
	m := metrics.New()
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.Observer = m }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Text: "What's the feature idea?"})
	thread, _ := r.mention("*brief", "")
	r.waitFor("the answer", func() bool { ss := r.slack.Streams(); return len(ss) == 1 && ss[0].Stopped })
	answer := r.slack.Streams()[0].TS
	key := r.slack.TeamID() + "/" + channel + "/" + thread

	r.restart()
	click := func(value string) {
		env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: answer, ThreadTS: thread,
			ActionID: "feedback", Value: value, Type: "feedback_buttons"})
		if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() []bot.Feedback {
		s, err := r.st.FindSession(ctx, key)
		if err != nil || s == nil {
			t.Fatalf("session: %v", err)
		}
		list, err := bot.SessionFeedback(s)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	click("positive")
	r.waitFor("the feedback to be stored", func() bool { return len(stored()) == 1 })
	f := stored()[0]
	if f.TS != answer || f.User != user || f.Value != "positive" || f.Agent != "product-lead" || f.Workflow != "brief" || f.Time.IsZero() {
		t.Fatalf("feedback = %+v", f)
	}
	want := `
# HELP agentbot_feedback_total Feedback button clicks on agents' answers, by agent, workflow (the active skill or the last menu item picked; empty when none) and value (positive or negative).
# TYPE agentbot_feedback_total counter
agentbot_feedback_total{agent="product-lead",value="positive",workflow="brief"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "agentbot_feedback_total"); err != nil {
		t.Error(err)
	}

	click("negative")
	r.waitFor("the changed vote", func() bool { l := stored(); return len(l) == 1 && l[0].Value == "negative" })
	r.restart()
	if l := stored(); len(l) != 1 || l[0].Value != "negative" || l[0].TS != answer {
		t.Fatalf("feedback after a restart = %+v", l)
	}
	if r.model.Calls() != 1 {
		t.Fatalf("feedback made model calls: %d", r.model.Calls())
	}
}

// SessionFeedback reads the feedback of a session stored with one Meta key
// per field (the form before the one thread state).
func TestSessionFeedbackReadsTheOldKeys(t *testing.T) {
	s := &transcript.Session{ID: "s1", Meta: map[string]string{
		bot.MetaFeedback: `[{"ts":"1.2","user":"U2","value":"positive","agent":"pm","workflow":"brief","time":"2026-11-22T15:55:00Z"}]`,
	}}
	list, err := bot.SessionFeedback(s)
	if err != nil || len(list) != 1 || list[0].User != "U2" {
		t.Fatalf("SessionFeedback = %+v, %v", list, err)
	}
}
