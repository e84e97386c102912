package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/bot"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage"
)

// A round of three personas.
const partyRound = "_Chairs scrape; Winston is already at the whiteboard._\n" +
	"📊 **Mary:** The interviews say people want exports, not dashboards.\n" +
	"🏗️ **Winston:** Exports are a batch job. Boring tech, ship it Friday.\n" +
	"📋 **John:** Why Friday? Who asked for it?\n"

// "@agentbot party about X" starts party mode in one
// model call, and a round of three personas gives three messages, each
// under its persona's name and icon, with the staging line in a context
// block under the app's name; the feedback buttons are under the last.
// Streamed or posted alike.
func TestPartyRoundInSlack(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		name := map[bool]string{true: "streamed", false: "posted"}[streaming]
		t.Run(name, func(t *testing.T) {
			root := fixtures.Copy(t, fixtures.V612)
			r := newRig(t, rigOpts{bmad: []string{root}, mutate: func(c *bot.Config) { c.NoStreaming = !streaming }})
			storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "pm")
			r.model.Enqueue(fakemodel.Reply{Text: partyRound})
			thread, _ := r.mention("party about exports", "")
			want := map[string]string{
				"📊 Mary, Business Analyst":     "The interviews say people want exports",
				"🏗️ Winston, System Architect": "Boring tech, ship it Friday.",
				"📋 John, Product Manager":      "Why Friday? Who asked for it?",
			}
			defer func() {
				if t.Failed() {
					for _, m := range r.botMessages(thread) {
						t.Logf("%s %+v %q %s", m.Kind, m.As, text(m), m.Blocks)
					}
				}
			}()
			r.waitFor("three persona messages", func() bool {
				n := 0
				for _, m := range r.botMessages(thread) {
					if w, ok := want[m.As.Username]; ok && strings.Contains(text(m), w) && strings.Contains(string(m.Blocks), "speaker") {
						n++
					}
				}
				return n == 3
			})
			if r.model.Calls() != 1 {
				t.Fatalf("%d model calls", r.model.Calls())
			}
			var order []string
			staged := false
			for _, m := range r.botMessages(thread) {
				if _, ok := want[m.As.Username]; ok && strings.Contains(string(m.Blocks), `"block_id":"speaker"`) {
					order = append(order, m.As.Username)
					if strings.Contains(text(m), "**Mary:**") || strings.Contains(text(m), "Winston:") {
						t.Errorf("a turn's header stays in its message: %q", text(m))
					}
				}
				if strings.Contains(string(m.Blocks), `"block_id":"staging"`) {
					staged = true
					if m.As.Username != "" || !strings.Contains(string(m.Blocks), "Chairs scrape") {
						t.Errorf("staging message: %+v %s", m.As, m.Blocks)
					}
				}
			}
			if strings.Join(order, "|") != "📊 Mary, Business Analyst|🏗️ Winston, System Architect|📋 John, Product Manager" {
				t.Fatalf("persona messages in order %v", order)
			}
			if !staged {
				t.Fatal("no staging context block")
			}
			// A reply in the thread goes to the room: the next round splits too.
			r.model.Enqueue(fakemodel.Reply{Text: "📊 **Mary:** CSV first, then we talk.\n🏗️ **Winston:** Fine by me.\n"})
			r.reply("what about CSV?", thread)
			r.waitFor("the second round", func() bool {
				for _, m := range r.botMessages(thread) {
					if m.As.Username == "🏗️ Winston, System Architect" && strings.Contains(text(m), "Fine by me.") && strings.Contains(string(m.Blocks), `"block_id":"speaker"`) {
						return true
					}
				}
				return false
			})
			last := r.model.Requests()[1].Messages
			if !strings.Contains(last[len(last)-1].Content, "what about CSV?") {
				t.Errorf("the reply did not reach the model: %q", last[len(last)-1].Content)
			}
			msgs := r.botMessages(thread)
			for _, m := range msgs[:len(msgs)-2] {
				hasFeedback := strings.Contains(string(m.Blocks), `"block_id":"feedback"`)
				last := m.As.Username == "📋 John, Product Manager" && strings.Contains(text(m), "Why Friday")
				if hasFeedback != last {
					t.Errorf("feedback buttons on %q: %v", m.As.Username, hasFeedback)
				}
			}
		})
	}
}
