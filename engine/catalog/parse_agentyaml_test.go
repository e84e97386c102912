package catalog

import (
	"reflect"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

func TestParseAgentYAMLFixtures(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, a *Agent)
	}{
		{"src/bmm/agents/pm.agent.yaml", func(t *testing.T, a *Agent) {
			if a.ID != "pm" || a.Name != "John" || a.Title != "Product Manager" || a.Icon != "📋" || a.Module != "bmm" {
				t.Errorf("metadata %+v", a)
			}
			if len(a.Menu) != 6 {
				t.Fatalf("menu %d items", len(a.Menu))
			}
			want := MenuItem{
				Cmd: "CP or fuzzy match on create-prd", Trigger: "create-prd", Code: "CP",
				Description: "Create PRD: Expert led facilitation to produce your Product Requirements Document",
				Exec:        "{project-root}/_bmad/bmm/workflows/2-plan-workflows/create-prd/workflow-create-prd.md",
			}
			if a.Menu[0] != want {
				t.Errorf("menu[0]\n got %+v\nwant %+v", a.Menu[0], want)
			}
			if cc := a.Menu[5]; cc.Code != "CC" || cc.Trigger != "correct-course" || cc.Workflow != "{project-root}/_bmad/bmm/workflows/4-implementation/correct-course/workflow.yaml" {
				t.Errorf("menu[5] %+v", cc)
			}
			if !strings.HasPrefix(a.Persona.Principles, "- Channel expert product manager thinking") || !strings.Contains(a.Persona.Principles, "\n- Ship the smallest thing") {
				t.Errorf("principles (block string) %q", a.Persona.Principles)
			}
			if a.Persona.CommunicationStyle != "Asks 'WHY?' relentlessly like a detective on a case. Direct and data-sharp, cuts through fluff to what actually matters." {
				t.Errorf("style %q", a.Persona.CommunicationStyle)
			}
		}},
		{"src/bmm/agents/dev.agent.yaml", func(t *testing.T, a *Agent) {
			if len(a.Activation) != 8 || !strings.HasPrefix(a.Activation[0], "READ the entire story file BEFORE any implementation") {
				t.Errorf("critical_actions %q", a.Activation)
			}
		}},
		{"src/bmm/agents/sm.agent.yaml", func(t *testing.T, a *Agent) {
			er := menuByTrigger(t, a, "epic-retrospective")
			if er.Code != "ER" || er.Data != "{project-root}/_bmad/_config/agent-manifest.csv" || er.Workflow == "" {
				t.Errorf("ER %+v", er)
			}
		}},
		{"src/bmm/agents/qa.agent.yaml", func(t *testing.T, a *Agent) {
			if len(a.Prompts) != 1 || a.Prompts[0].ID != "welcome" || !strings.HasPrefix(a.Prompts[0].Content, "👋 Hi, I'm Quinn") {
				t.Errorf("prompts %+v", a.Prompts)
			}
		}},
		{"src/bmm/agents/tech-writer/tech-writer.agent.yaml", func(t *testing.T, a *Agent) {
			wd := menuByTrigger(t, a, "write-document")
			if wd.Code != "WD" || !strings.HasPrefix(wd.Action, "Engage in multi-turn conversation") || wd.Description != "Write Document: Describe in detail what you want, and the agent will follow the documentation best practices defined in agent memory." {
				t.Errorf("WD %+v", wd)
			}
		}},
		{"src/core/agents/bmad-master.agent.yaml", func(t *testing.T, a *Agent) {
			if a.ID != "bmad-master" || a.Module != "" || len(a.Activation) != 1 {
				t.Errorf("bmad-master %+v", a)
			}
			if lt := menuByTrigger(t, a, "list-tasks"); lt.Code != "LT" || lt.Description != "List Available Tasks" {
				t.Errorf("LT %+v", lt)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			a := parseFixture(t, fixtures.V6, tt.file)
			if a.Format != FormatAgentYAML || !a.EntryPoint {
				t.Errorf("format %s entry %v", a.Format, a.EntryPoint)
			}
			for _, it := range a.Menu {
				if it.Code == "" || it.Trigger == "" || strings.HasPrefix(it.Description, "[") {
					t.Errorf("item not split: %+v", it)
				}
			}
			tt.check(t, a)
		})
	}
}

func TestParseAgentYAMLPrinciplesList(t *testing.T) {
	src := `agent:
  metadata: {id: x, name: Ann, title: Analyst, icon: "🔍"}
  persona:
    role: Analyst
    principles:
      - Be curious
      - Be precise
  critical_actions: ["Load {project-root}/bmad/bmm/config.yaml"]
  menu:
    - trigger: brief
      workflow: "{project-root}/bmad/bmm/workflows/brief/workflow.yaml"
      description: Write a brief
    - trigger: "*party"
      validate-workflow: v.yaml
      tmpl: t.md
      description: "[PM] Party"
  prompts:
    - id: p1
      content: Do the thing
`
	a, err := ParseAgent("custom/ann.agent.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != "ann" || a.Name != "Ann" || a.Persona.Principles != "- Be curious\n- Be precise" {
		t.Errorf("agent %+v", a)
	}
	want := []MenuItem{
		{Cmd: "brief", Trigger: "brief", Description: "Write a brief", Workflow: "{project-root}/bmad/bmm/workflows/brief/workflow.yaml"},
		{Cmd: "*party", Trigger: "party", Code: "PM", Description: "Party", ValidateWorkflow: "v.yaml", Tmpl: "t.md"},
	}
	if !reflect.DeepEqual(a.Menu, want) {
		t.Errorf("menu %+v", a.Menu)
	}
	if !reflect.DeepEqual(a.Prompts, []Prompt{{ID: "p1", Content: "Do the thing"}}) {
		t.Errorf("prompts %+v", a.Prompts)
	}
}

func TestParseAgentYAMLBad(t *testing.T) {
	for name, src := range map[string]string{
		"tabs.agent.yaml":     "agent:\n\tmetadata: x\n",
		"list.agent.yaml":     "agent: [1, 2]\n",
		"scalar.agent.yaml":   "agent: hello\n",
		"unclosed.agent.yaml": "agent:\n  metadata: {name: \"x\n",
	} {
		if a, err := ParseAgent(name, []byte(src)); err == nil {
			t.Errorf("%s: want an error, got %+v", name, a)
		}
	}
}
