package prompt

import (
	"fmt"
	"strings"
	"testing"

	"agentbot/engine/catalog"
	"agentbot/engine/vars"
)

// The system prompt is byte-stable: the tools' rules in their order after
// the file rules, the variables sorted, no date; a handoff comes last.
func TestSystemIsStable(t *testing.T) {
	a := &catalog.Agent{ID: "pl", Name: "Maren", Title: "Product Lead", Menu: []catalog.MenuItem{{Cmd: "*brief", Trigger: "brief", Description: "Write a brief"}}}
	v := vars.Vars{"user_name": "Ann", "date": "2026-01-02", "output_folder": "/outputs"}
	p := System(a, v, nil, []string{"Rule one.", "", "Rule two."})
	if p != System(a, v, nil, []string{"Rule one.", "", "Rule two."}) {
		t.Fatal("the same agent gave two prompts")
	}
	one, two, files := strings.Index(p, "Rule one."), strings.Index(p, "Rule two."), strings.Index(p, "## How you work with files")
	if files < 0 || one < files || two < one {
		t.Fatalf("rules out of order:\n%s", p)
	}
	if strings.Contains(p, "2026-01-02") || strings.Index(p, "{output_folder}") > strings.Index(p, "{user_name}") {
		t.Fatalf("date in the prompt, or variables unsorted:\n%s", p)
	}
	if got := WithHandoff("Before you, Bob.", p); !strings.HasSuffix(got, "\n\n## Handoff\nBefore you, Bob.") || WithHandoff("", p) != p {
		t.Fatalf("handoff: %q", got[len(p):])
	}
}

// A menu as long as a collection shows its first items and a count.
func TestGreetLongMenu(t *testing.T) {
	var menu []catalog.MenuItem
	for i := range maxGreetItems + 5 {
		menu = append(menu, catalog.MenuItem{Cmd: fmt.Sprintf("skill-%d", i), Skill: fmt.Sprintf("skill-%d", i)})
	}
	g := Greet(&catalog.Agent{Name: "Lib", Menu: menu}, vars.Vars{})
	if len(g.Menu) != greetItems || g.More != len(menu)-greetItems || g.MoreLine() == "" {
		t.Fatalf("greeting shows %d items, %d more", len(g.Menu), g.More)
	}
}
