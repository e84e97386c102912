package engine_test

import (
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
)

// partyRoster returns the party roster that the load_skill result of the
// one request after the first before carries.
func partyRoster(t *testing.T, h *harness, before int) map[string]any {
	t.Helper()
	reqs := h.fm.Requests()
	if len(reqs) != before+1 {
		t.Fatalf("%d model calls, want 1", len(reqs)-before)
	}
	res := toolResults(t, reqs[before])
	if len(res) != 1 || res[0]["skill"] != "bmad-party-mode" {
		t.Fatalf("first request's tool results: %v", res)
	}
	r, _ := res[0]["party_roster"].(map[string]any)
	if r == nil {
		t.Fatalf("no party_roster in %v", res[0])
	}
	return r
}

// memberNames lists a roster's members as "icon name".
func memberNames(r map[string]any) string {
	var out []string
	for _, m := range r["members"].([]any) {
		mm := m.(map[string]any)
		out = append(out, mm["icon"].(string)+" "+mm["name"].(string))
	}
	return strings.Join(out, ", ")
}

// "party" starts party mode in one model call whose request carries the
// installed agents as the roster; a team override's group is in the menu
// and --party picks it, with --mode.
func TestPartyStartsInOneCall(t *testing.T) {
	h, root := skillHarness(t, func(root string) {
		write(t, root, "_bmad/custom/bmad-party-mode.toml", `
[[workflow.party_groups]]
id = "writers-room"
name = "The Writers' Room"
scene = "Late-night room."
members = ["analyst", "architect"]
memory = true
`)
	})
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "📊 **Mary:** Hello!"})
	h.turn(s, "party")
	r := partyRoster(t, h, 0)
	if r["active"] != "installed" || r["party_mode"] != "session" || r["memory_enabled"] != true {
		t.Fatalf("roster: %v", r)
	}
	names := memberNames(r)
	for _, want := range []string{"📊 Mary", "📋 John", "🏗️ Winston", "Sally", "Amelia"} {
		contains(t, names, want, "installed roster")
	}
	groups, _ := r["groups"].([]any)
	if len(groups) != 3 || groups[2].(map[string]any)["id"] != "writers-room" {
		t.Fatalf("groups: %v", groups)
	}
	if !strings.HasSuffix(strings.TrimSpace(r["memory_dir"].(string)), "party-mode/memories") || strings.Contains(r["memory_dir"].(string), "{") {
		t.Errorf("memory_dir: %v", r["memory_dir"])
	}

	s2, _ := h.start("k2", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "🏗️ **Winston:** Right."})
	h.turn(s2, "party --party writers-room --mode subagent about the data model")
	r = partyRoster(t, h, 1)
	if r["active"] != "writers-room" || r["party_mode"] != "subagent" || memberNames(r) != "📊 Mary, 🏗️ Winston" || r["scene"] != "Late-night room." {
		t.Fatalf("--party: %v", r)
	}
	noHostPaths(t, h, root)
}

// "party with Winston and Mary about X" makes them the roster.
func TestPartyWithNames(t *testing.T) {
	h, _ := skillHarness(t, nil)
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "🏗️ **Winston:** Go."})
	h.turn(s, "party with Winston and Mary about the gateway")
	r := partyRoster(t, h, 0)
	if r["active"] != "inline" || memberNames(r) != "🏗️ Winston, 📊 Mary" {
		t.Fatalf("roster: %v", r)
	}
	last := h.fm.Requests()[0].Messages
	contains(t, last[len(last)-1].Content+last[len(last)-3].Content, "about the gateway", "the user's message")
}

// A message that merely starts with the word is not a party.
func TestPartyWordIsNotACommand(t *testing.T) {
	h, _ := skillHarness(t, nil)
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "Sure."})
	h.turn(s, "party planning for the launch is next week")
	for _, r := range toolResults(t, h.fm.Requests()[0]) {
		if r["skill"] == "bmad-party-mode" {
			t.Fatalf("party mode loaded: %v", r["skill"])
		}
	}
}

// An unknown mode is a clear error to the model; the session goes on.
func TestPartyBadMode(t *testing.T) {
	h, _ := skillHarness(t, nil)
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "That mode does not exist."}, fakemodel.Reply{Text: "Hi."})
	h.turn(s, "party --mode chaos")
	res := toolResults(t, h.fm.Requests()[0])
	if e, _ := res[0]["error"].(string); !strings.Contains(e, `"chaos"`) || !strings.Contains(e, "subagent") {
		t.Fatalf("bad mode: %v", res[0])
	}
	h.turn(s, "hello")
	if h.fm.Calls() != 2 {
		t.Fatalf("%d calls", h.fm.Calls())
	}
}
