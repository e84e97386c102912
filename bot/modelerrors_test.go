package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// A model error reaches the person in the thread with one prefix and its
// hint: an unknown model names the models the endpoint offers, and a
// quota error says to check billing, after one try.
func TestSlackModelErrorHints(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(fm *fakemodel.Server)
		model string
		want  []string
		calls int
	}{
		{"unknown model", func(fm *fakemodel.Server) {
			fm.SetModels("gpt-a", "gpt-b")
			fm.RefuseUnknownModels()
		}, "gpt-zz", []string{"status 404", "does not exist", "**What to do:**", `does not offer the model "gpt-zz"`, "it offers gpt-a, gpt-b"}, 1},
		{"quota", func(fm *fakemodel.Server) {
			fm.Enqueue(fakemodel.Reply{Status: 429, ErrorBody: fakemodel.InsufficientQuotaBody})
		}, "gpt-a", []string{"status 429", "exceeded your current quota", "**What to do:**", "billing"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm := fakemodel.NewTB(t)
			tc.setup(fm)
			r := newRig(t, rigOpts{engine: func(c *engine.Config) { c.Model = modelFor(fm, tc.model, false) }})
			if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
				t.Fatal(err)
			}
			thread, _ := r.mention("*brief", "")
			r.waitText(thread, "What to do")
			var got string
			for _, m := range r.botMessages(thread) {
				if strings.Contains(m.MarkdownText(), "What to do") {
					got = m.MarkdownText()
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the failure lacks %q:\n%s", w, got)
				}
			}
			if strings.Count(got, "model call") != 1 || strings.Contains(got, "turn ") {
				t.Errorf("the failure repeats its prefix or names the turn:\n%s", got)
			}
			if n := fm.Calls(); n != tc.calls {
				t.Errorf("%d model calls, want %d (quota is not retried)", n, tc.calls)
			}
		})
	}
}
