package main

import (
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// chat --party --with Winston,Mary starts a party of those two in one
// model call, and prints each persona's turn under the persona's name;
// the next line goes to the room, and its turns are split too.
func TestChatParty(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	fm := fakemodel.NewTB(t)
	fm.Enqueue(
		fakemodel.Reply{Text: "_Winston taps the whiteboard._\n🏗️ **Winston:** Boring tech first.\n📊 **Mary:** The interviews disagree.\n"},
		fakemodel.Reply{Text: "📊 **Mary:** CSV, then.\n"},
	)
	vars := chatVars(t, fm)
	vars["AGENTBOT_BMAD_ROOT"] = root
	r := runCmd(t, vars, "what about CSV?\n", "chat", "--agent", "bmad-agent-pm", "--party", "--with", "Winston, Mary")
	r.wantCode(t, 0)
	out := r.stdout
	for _, want := range []string{
		"> party --with Winston,Mary",
		"_Winston taps the whiteboard._\n",
		"\n── 🏗️ Winston, System Architect ──\nBoring tech first.\n",
		"\n── 📊 Mary, Business Analyst ──\nThe interviews disagree.\n",
		"\n── 📊 Mary, Business Analyst ──\nCSV, then.\n",
	} {
		contains(t, "party output", out, want)
	}
	if strings.Contains(out, "**Winston:**") {
		t.Errorf("a turn's header is printed as written:\n%s", out)
	}
	reqs := fm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	var roster struct {
		Active  string `json:"active"`
		Members []struct {
			Name string `json:"name"`
		} `json:"members"`
	}
	for _, m := range reqs[0].Messages {
		if strings.Contains(m.Content, `"party_roster"`) {
			var res struct {
				Party json.RawMessage `json:"party_roster"`
			}
			if err := json.Unmarshal([]byte(m.Content), &res); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(res.Party, &roster); err != nil {
				t.Fatal(err)
			}
		}
	}
	if roster.Active != "inline" || len(roster.Members) != 2 || roster.Members[0].Name != "Winston" || roster.Members[1].Name != "Mary" {
		t.Fatalf("roster in the first request: %+v", roster)
	}
}
