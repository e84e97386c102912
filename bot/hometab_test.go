package bot_test

import (
	"context"
	"strings"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// lastHome returns the last Home tab published for a user, as JSON text.
func lastHome(r *rig, u string) string {
	var out string
	for _, c := range r.slack.CallsTo("views.publish") {
		if strings.Contains(string(c.JSON), u) {
			out = string(c.JSON)
		}
	}
	return out
}

// The Home tab lists the agents with a button each, and a click starts a
// DM session with that agent (its greeting, no model call); after a turn
// that saves a document, the tab lists the session and its document.
func TestHomeTab(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": user, "tab": "home"})
	r.waitFor("the home tab", func() bool { return lastHome(r, user) != "" })
	home := lastHome(r, user)
	for _, want := range []string{"Maren", "home:product-lead", "home:retro-coach", "No sessions yet"} {
		if !strings.Contains(home, want) {
			t.Fatalf("home tab lacks %q:\n%s", want, home)
		}
	}
	if strings.Contains(home, "home:story-writer") {
		t.Fatal("a non-entry-point agent is offered")
	}
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ActionID: "home:product-lead", Value: "product-lead"})
	dm := "D" + strings.TrimPrefix(user, "U")
	r.waitFor("the greeting in the DM", func() bool {
		for _, m := range r.slack.Messages() {
			if m.Channel == dm && strings.Contains(text(m), "Maren") && m.ThreadTS != "" {
				return true
			}
		}
		return false
	})
	if r.model.Calls() != 0 {
		t.Fatal("starting a session from the home tab called the model")
	}

	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "# PRD"})}},
		fakemodel.Reply{Text: "Saved."},
	)
	calls := len(r.slack.CallsTo("views.publish"))
	r.mention("write the prd now", "")
	r.waitFor("the home tab after the save", func() bool { return len(r.slack.CallsTo("views.publish")) > calls })
	home = lastHome(r, user)
	if !strings.Contains(home, "prd.md (v1)") || !strings.Contains(home, "open the thread") {
		t.Fatalf("home tab after a save:\n%s", home)
	}
}
