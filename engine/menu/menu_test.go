package menu

import (
	"testing"

	"agentbot/engine/catalog"
)

func TestMatch(t *testing.T) {
	menu := []catalog.MenuItem{
		{Cmd: "*help", Trigger: "help"},
		{Cmd: "*brief", Trigger: "brief"},
		{Cmd: "CP or fuzzy match on create-prd", Trigger: "create-prd", Code: "CP"},
	}
	for _, tc := range []struct {
		in   string
		idx  int
		rest string
	}{
		{"2", 1, ""},
		{"2.", 1, ""},
		{"*brief", 1, ""},
		{"*BRIEF for the checkout", 1, "for the checkout"},
		{"brief", 1, ""},
		{"cp", 2, ""},
		{"*create-prd", 2, ""},
		{"create-prd", 2, ""},
		{"help me plan a feature", -1, ""},
		{"brief me on the incident", -1, ""},
		{"3 days ago the site went down", -1, ""},
		{"4", -1, ""},
		{"0", -1, ""},
		{"*cp", -1, ""},
		{"*", -1, ""},
		{"", -1, ""},
		{"what's next?", -1, ""},
	} {
		idx, rest, ok := Match(menu, tc.in)
		if (tc.idx >= 0) != ok || (ok && (idx != tc.idx || rest != tc.rest)) {
			t.Errorf("Match(%q) = %d, %q, %v; want %d, %q", tc.in, idx, rest, ok, tc.idx, tc.rest)
		}
	}
}
