package catalog

import (
	"reflect"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

func TestParseV4Fixtures(t *testing.T) {
	pm := parseFixture(t, fixtures.V4, "bmad-core/agents/pm.md")
	if pm.Format != FormatV4 || pm.ID != "pm" || pm.Name != "John" || pm.Icon != "📋" || !strings.HasPrefix(pm.Description, "Use for creating PRDs") {
		t.Fatalf("pm %+v", pm)
	}
	if pm.Persona.Role != "Investigative Product Strategist & Market-Savvy PM" || pm.Persona.CommunicationStyle != "Analytical, inquisitive, data-driven, user-focused, pragmatic" {
		t.Errorf("persona %+v", pm.Persona)
	}
	if !strings.Contains(pm.Persona.Identity, "Focus: Creating PRDs") || !strings.HasPrefix(pm.Persona.Principles, `- Deeply understand "Why"`) {
		t.Errorf("persona %+v", pm.Persona)
	}
	if len(pm.Menu) != 12 || pm.Menu[0].Trigger != "help" || pm.Menu[11].Trigger != "exit" {
		t.Fatalf("commands %+v", pm.Menu)
	}
	if it := menuByTrigger(t, pm, "create-prd"); it.Cmd != "*create-prd" || it.Description != "run task create-doc.md with template prd-tmpl.yaml" {
		t.Errorf("create-prd %+v", it)
	}
	wantDeps := map[string][]string{
		"checklists": {"change-checklist.md", "pm-checklist.md"},
		"data":       {"technical-preferences.md"},
		"tasks":      {"brownfield-create-epic.md", "brownfield-create-story.md", "correct-course.md", "create-deep-research-prompt.md", "create-doc.md", "execute-checklist.md", "shard-doc.md"},
		"templates":  {"brownfield-prd-tmpl.yaml", "prd-tmpl.yaml"},
	}
	if !reflect.DeepEqual(pm.Dependencies, wantDeps) {
		t.Errorf("dependencies %v", pm.Dependencies)
	}
	if len(pm.Activation) != 13 || !strings.HasPrefix(pm.Activation[2], "STEP 3: Load and read `.bmad-core/core-config.yaml`") {
		t.Errorf("activation %q", pm.Activation)
	}
	if len(pm.Rules) < 2 || !strings.HasPrefix(pm.Rules[0], "IDE-FILE-RESOLUTION:\n- FOR LATER USE ONLY") || !strings.HasPrefix(pm.Rules[1], "REQUEST-RESOLUTION: ") {
		t.Errorf("rules %q", pm.Rules)
	}

	master := parseFixture(t, fixtures.V4, "bmad-core/agents/bmad-master.md")
	if it := menuByTrigger(t, master, "create-doc"); it.Cmd != "*create-doc {template}" || !strings.HasPrefix(it.Description, "execute task create-doc") {
		t.Errorf("create-doc %+v", it)
	}
	if it := menuByTrigger(t, master, "shard-doc"); it.Cmd != "*shard-doc {document} {destination}" {
		t.Errorf("shard-doc %+v", it)
	}

	dev := parseFixture(t, fixtures.V4, "bmad-core/agents/dev.md")
	ds := menuByTrigger(t, dev, "develop-story")
	if !strings.Contains(ds.Action, "order-of-execution:") || !strings.Contains(ds.Action, "ready-for-review:") {
		t.Errorf("nested develop-story kept as action: %+v", ds)
	}
	if !strings.HasPrefix(dev.Persona.Principles, "- CRITICAL: Story has ALL info") {
		t.Errorf("top-level core_principles %q", dev.Persona.Principles)
	}

	qa := parseFixture(t, fixtures.V4, "bmad-core/agents/qa.md")
	if it := menuByTrigger(t, qa, "review"); !strings.HasPrefix(it.Description, "Adaptive, risk-aware comprehensive review.\nProduces:") {
		t.Errorf("multi-line command %q", it.Description)
	}

	orch := parseFixture(t, fixtures.V4, "bmad-core/agents/bmad-orchestrator.md")
	if len(orch.Menu) != 11 || orch.Menu[1].Trigger != "agent" || orch.Menu[1].Description != "Transform into a specialized agent (list if name not specified)" {
		t.Errorf("map commands %+v", orch.Menu)
	}
	var extra bool
	for _, r := range orch.Rules {
		extra = extra || strings.HasPrefix(r, "help-display-template:")
	}
	if !extra {
		t.Errorf("extra sections lost: %q", orch.Rules)
	}
}

func TestParseV4Sample(t *testing.T) {
	src := "<!-- header -->\n# x\n\n```yaml\n" + `agent:
  name: Kim
  title: Keeper
  icon: K
persona:
  role: Keeper
  core_principles: [One, Two]
commands:
  - help
  - "*go {where}": Go somewhere
  - plan:
      - step one
dependencies:
  tasks: [a.md]
` + "```\n"
	a, err := ParseAgent("agents/kim.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if a.Format != FormatV4 || a.ID != "kim" || a.Persona.Principles != "- One\n- Two" {
		t.Errorf("agent %+v", a)
	}
	want := []MenuItem{
		{Cmd: "*help", Trigger: "help"},
		{Cmd: "*go {where}", Trigger: "go", Description: "Go somewhere"},
		{Cmd: "*plan", Trigger: "plan", Action: "- step one"},
	}
	if !reflect.DeepEqual(a.Menu, want) {
		t.Errorf("menu %+v", a.Menu)
	}
	bad := "```yaml\nagent:\n  name: [unclosed\n```\n"
	if _, err := ParseAgent("agents/bad.md", []byte(bad)); err == nil || !strings.Contains(err.Error(), "yaml block") {
		t.Errorf("broken v4 YAML: %v", err)
	}
}
