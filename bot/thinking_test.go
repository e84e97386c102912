package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/bot"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// A model that reasons shows a short "thinking" status while it does,
// through Slack: the status line beside a stream (with the Stop button),
// the fallback's status message, or the assistant thread's status in a
// DM. The status goes back to working when the answer begins, and the
// reasoning itself never reaches Slack.
func TestSlackThinkingStatus(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		dm          bool
		noStreaming bool
	}{
		{"channel, streaming", false, false},
		{"channel, fallback", false, true},
		{"dm", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := fakemodel.NewTB(t)
			fm.SetProvider(fakemodel.DeepSeek)
			fm.Enqueue(fakemodel.Reply{Text: "Answer after some thought.", Chunks: 2})
			r := newRig(t, rigOpts{
				engine: func(c *engine.Config) { c.Model = modelFor(fm, "deepseek-v4-flash", false) },
				mutate: func(c *bot.Config) { c.NoStreaming = tc.noStreaming },
			})
			where, thread := channel, ""
			if tc.dm {
				where = "D0THINK01"
				if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), where, "product-lead"); err != nil {
					t.Fatal(err)
				}
				thread = r.slack.NextTS()
				r.slack.SendEvent(map[string]any{"type": "message", "user": user, "channel": where, "channel_type": "im", "text": "a question", "ts": thread})
			} else {
				if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
					t.Fatal(err)
				}
				thread, _ = r.mention("a question", "")
			}
			r.waitText(thread, "Answer after some thought.")

			if tc.dm {
				var saw bool
				for _, st := range r.slack.Statuses() {
					saw = saw || (st.Channel == where && st.Status == "is thinking…")
				}
				if !saw {
					t.Errorf("no thinking status in the DM: %+v", r.slack.Statuses())
				}
			} else {
				thinking, working := -1, -1
				for i, m := range r.slack.Messages() {
					if m.ThreadTS != thread {
						continue
					}
					if strings.Contains(m.Text, "💭 Thinking…") && thinking < 0 {
						thinking = i
					}
					if strings.Contains(m.Text, "⏳ Working…") && thinking >= 0 && working < 0 {
						working = i
					}
				}
				if thinking < 0 || working < thinking {
					t.Errorf("thinking status at %d, back to working at %d: %+v", thinking, working, r.slack.Messages())
				}
			}
			for _, m := range r.slack.Messages() {
				if strings.Contains(text(m), fakemodel.ReasoningMarker) {
					t.Errorf("reasoning reached Slack: %q", text(m))
				}
			}
			for _, s := range r.slack.Streams() {
				if strings.Contains(s.Text, fakemodel.ReasoningMarker) {
					t.Errorf("reasoning reached a stream: %q", s.Text)
				}
			}
		})
	}
}
