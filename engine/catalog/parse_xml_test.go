package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

func parseFixture(t *testing.T, name, rel string) *Agent {
	t.Helper()
	p, data := readFixture(t, name, rel)
	a, err := ParseAgent(p, data)
	if err != nil {
		t.Fatalf("ParseAgent(%s): %v", rel, err)
	}
	return a
}

func menuByTrigger(t *testing.T, a *Agent, trigger string) MenuItem {
	t.Helper()
	for _, it := range a.Menu {
		if it.Trigger == trigger {
			return it
		}
	}
	t.Fatalf("%s: no menu item %q in %+v", a.ID, trigger, a.Menu)
	return MenuItem{}
}

func TestParseXMLV6PM(t *testing.T) {
	a := parseFixture(t, fixtures.Alpha5, "bmad/bmm/agents/pm.md")
	if a.Format != FormatXMLV6 || a.Name != "John" || a.Title != "Product Manager" || a.Icon != "📋" || a.ID != "pm" {
		t.Fatalf("header: %+v", a)
	}
	wf := "{project-root}/bmad/bmm/workflows/"
	want := []MenuItem{
		{Cmd: "*help", Trigger: "help", Description: "Show numbered menu"},
		{Cmd: "*workflow-init", Trigger: "workflow-init", Description: "Start a new sequenced workflow path", Workflow: wf + "workflow-status/init/workflow.yaml"},
		{Cmd: "*workflow-status", Trigger: "workflow-status", Description: "Check workflow status and get recommendations (START HERE!)", Workflow: wf + "workflow-status/workflow.yaml"},
		{Cmd: "*create-prd", Trigger: "create-prd", Description: "Create Product Requirements Document (PRD) for Level 2-4 projects", Workflow: wf + "2-plan-workflows/prd/workflow.yaml"},
		{Cmd: "*create-epics-and-stories", Trigger: "create-epics-and-stories", Description: "Break PRD requirements into implementable epics and stories", Workflow: wf + "2-plan-workflows/prd/create-epics-and-stories/workflow.yaml"},
		{Cmd: "*validate-prd", Trigger: "validate-prd", Description: "Validate PRD + Epics + Stories completeness and quality", ValidateWorkflow: wf + "2-plan-workflows/prd/workflow.yaml"},
		{Cmd: "*tech-spec", Trigger: "tech-spec", Description: "Create Tech Spec for Level 0-1 (sometimes Level 2) projects", Workflow: wf + "2-plan-workflows/tech-spec/workflow.yaml"},
		{Cmd: "*validate-tech-spec", Trigger: "validate-tech-spec", Description: "Validate Technical Specification Document", ValidateWorkflow: wf + "2-plan-workflows/tech-spec/workflow.yaml"},
		{Cmd: "*correct-course", Trigger: "correct-course", Description: "Course Correction Analysis", Workflow: wf + "4-implementation/correct-course/workflow.yaml"},
		{Cmd: "*exit", Trigger: "exit", Description: "Exit with confirmation"},
	}
	if !reflect.DeepEqual(a.Menu, want) {
		t.Errorf("menu:\n got %+v\nwant %+v", a.Menu, want)
	}
	if !strings.Contains(a.Persona.Principles, `deeper "why" behind`) {
		t.Errorf("&quot; not decoded in principles: %q", a.Persona.Principles)
	}
	if a.Persona.Role != "Investigative Product Strategist + Market-Savvy PM" {
		t.Errorf("role %q", a.Persona.Role)
	}
	if len(a.Rules) != 6 || a.Rules[0] != "ALWAYS communicate in {communication_language} UNLESS contradicted by communication_style" {
		t.Errorf("rules %q", a.Rules)
	}
	if !strings.Contains(a.Handlers, `<handler type="workflow">`) || !strings.Contains(a.Handlers, `<handler type="validate-workflow">`) {
		t.Errorf("handlers %q", a.Handlers)
	}
	if a.Description != "Product Manager" {
		t.Errorf("frontmatter description %q", a.Description)
	}
}

func TestParseXMLV6Alpha5Agents(t *testing.T) {
	tests := []struct {
		file  string
		check func(t *testing.T, a *Agent)
	}{
		{"bmad/bmm/agents/analyst.md", func(t *testing.T, a *Agent) {
			it := menuByTrigger(t, a, "product-brief")
			if it.Cmd != "*product-brief" || it.Workflow != "{project-root}/bmad/bmm/workflows/1-analysis/product-brief/workflow.yaml" || it.Description != "Produce Project Brief" {
				t.Errorf("product-brief: %+v", it)
			}
		}},
		{"bmad/bmm/agents/tech-writer.md", func(t *testing.T, a *Agent) {
			if a.Name != "paige" {
				t.Errorf("name %q", a.Name)
			}
			actions := map[string]string{
				"generate-diagram": "Create a Mermaid diagram based on user description.",
				"validate-doc":     "Review the specified document against CommonMark standards",
				"improve-readme":   "Analyze the current README file",
				"explain-concept":  "Create a clear technical explanation",
				"standards-guide":  "Display the complete documentation standards from {project-root}/src/modules/bmm/workflows/techdoc/documentation-standards.md",
			}
			for trig, prefix := range actions {
				it := menuByTrigger(t, a, trig)
				if !strings.HasPrefix(it.Action, prefix) || it.Workflow != "" {
					t.Errorf("%s action %q", trig, it.Action)
				}
			}
			if it := menuByTrigger(t, a, "create-api-docs"); it.Workflow != "todo" {
				t.Errorf("create-api-docs %+v", it)
			}
			if !strings.Contains(a.Persona.Principles, "the reader's experience") {
				t.Errorf("&apos; not decoded: %q", a.Persona.Principles)
			}
			if !strings.Contains(a.Handlers, `<handler type="action">`) {
				t.Errorf("handlers %q", a.Handlers)
			}
		}},
		{"bmad/bmm/agents/dev.md", func(t *testing.T, a *Agent) {
			if len(a.Activation) != 12 {
				t.Fatalf("dev has %d activation steps, want 12: %q", len(a.Activation), a.Activation)
			}
			if a.Activation[0] != "Load persona from this current agent file (already in context)" {
				t.Errorf("step 1 %q", a.Activation[0])
			}
			if !strings.HasPrefix(a.Activation[1], "🚨 IMMEDIATE ACTION REQUIRED - BEFORE ANY OUTPUT:\n- Load and read {project-root}/bmad/bmm/config.yaml NOW\n- Store ALL fields") {
				t.Errorf("step 2 not dedented: %q", a.Activation[1])
			}
			if a.Activation[3] != "DO NOT start implementation until a story is loaded and Status == Approved" {
				t.Errorf("step 4 %q", a.Activation[3])
			}
			if !strings.Contains(a.Activation[5], "'Dev Agent Record' → 'Context Reference'") {
				t.Errorf("step 6 %q", a.Activation[5])
			}
			if it := menuByTrigger(t, a, "develop-story"); it.Workflow != "{project-root}/bmad/bmm/workflows/4-implementation/dev-story/workflow.yaml" {
				t.Errorf("develop-story %+v", it)
			}
		}},
		{"bmad/bmm/agents/sm.md", func(t *testing.T, a *Agent) {
			it := menuByTrigger(t, a, "epic-retrospective")
			if it.Workflow == "" || it.Data != "{project-root}/bmad/_cfg/agent-manifest.csv" {
				t.Errorf("epic-retrospective %+v", it)
			}
		}},
		{"bmad/cis/agents/storyteller.md", func(t *testing.T, a *Agent) {
			if it := menuByTrigger(t, a, "story"); it.Exec != "{project-root}/bmad/cis/workflows/storytelling/workflow.yaml" {
				t.Errorf("story %+v", it)
			}
		}},
		{"bmad/core/agents/bmad-master.md", func(t *testing.T, a *Agent) {
			if it := menuByTrigger(t, a, "list-tasks"); it.Action != "list all tasks from {project-root}/bmad/_cfg/task-manifest.csv" {
				t.Errorf("list-tasks %+v", it)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			a := parseFixture(t, fixtures.Alpha5, tt.file)
			if a.Format != FormatXMLV6 || !a.EntryPoint {
				t.Errorf("format %s entry %v", a.Format, a.EntryPoint)
			}
			tt.check(t, a)
		})
	}
}

// TestParseMenusComplete checks every agent file of the fixtures against a
// count of its menu elements: no <item> or <c> may be dropped.
func TestParseMenusComplete(t *testing.T) {
	for _, fx := range []string{fixtures.Alpha5, fixtures.Alpha0} {
		root := fixtures.Dir(t, fx)
		files, _ := filepath.Glob(filepath.Join(root, "bmad", "*", "agents", "*.md"))
		more, _ := filepath.Glob(filepath.Join(root, "src", "*", "agents", "*.md"))
		files = append(files, more...)
		more, _ = filepath.Glob(filepath.Join(root, "src", "modules", "*", "agents", "*.md"))
		files = append(files, more...)
		if len(files) < 10 {
			t.Fatalf("%s: found only %d agent files", fx, len(files))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Count(string(data), "<item ") + strings.Count(string(data), "<c ")
			a, err := ParseAgent(f, data)
			if want == 0 {
				if !errors.Is(err, ErrNotAgent) {
					t.Errorf("%s: no menu and err %v, want ErrNotAgent", f, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if len(a.Menu) != want {
				t.Errorf("%s: %d menu items, want %d", f, len(a.Menu), want)
			}
			for _, it := range a.Menu {
				if it.Trigger == "" || it.Description == "" || strings.ContainsAny(it.Trigger, "* ") {
					t.Errorf("%s: bad item %+v", f, it)
				}
			}
		}
	}
}

func TestParseWebOrchestratorXML(t *testing.T) {
	a := parseFixture(t, fixtures.Alpha5, "bmad/core/agents/bmad-web-orchestrator.agent.xml")
	if a.Format != FormatXMLV6 || a.EntryPoint {
		t.Errorf("format %s, entry point %v (localskip=true wants false)", a.Format, a.EntryPoint)
	}
	if a.ID != "bmad-web-orchestrator" || a.Name != "BMad Orchestrator" {
		t.Errorf("id %q name %q", a.ID, a.Name)
	}
	if len(a.Menu) != 5 || a.Menu[2].Trigger != "agents" || a.Menu[2].Cmd != "*agents [agent-name]" {
		t.Errorf("menu %+v", a.Menu)
	}
	// <rules> here is a text list without dashes: one rule per line.
	if len(a.Rules) != 8 || a.Rules[0] != "Web bundle environment - NO file system access, all content in XML nodes" {
		t.Errorf("rules %q", a.Rules)
	}
	if !strings.HasPrefix(a.Persona.Principles, "When I transform into another agent") {
		t.Errorf("core_principles %q", a.Persona.Principles)
	}
	if !strings.Contains(a.Handlers, "<extract>workflow, exec, tmpl, data, action, validate-workflow</extract>") {
		t.Errorf("handlers %q", a.Handlers)
	}
	if !strings.Contains(a.Handlers, `(e.g., <workflow id="workflow-id">)`) {
		t.Errorf("escaped markup in handlers not decoded: %q", a.Handlers)
	}
	var orch bool
	for _, s := range a.Activation {
		orch = orch || strings.HasPrefix(s, "orchestrator-specific:")
	}
	if !orch || !strings.HasPrefix(a.Activation[0], "Load this complete web bundle XML") {
		t.Errorf("activation %q", a.Activation)
	}
}

func TestParseXMLCmdsAlpha0(t *testing.T) {
	pm := parseFixture(t, fixtures.Alpha0, "src/modules/bmm/agents/pm.md")
	if pm.Format != FormatXMLCmds || pm.Name != "John" {
		t.Fatalf("pm %s %q", pm.Format, pm.Name)
	}
	want := []string{
		"Load into memory {project-root}/bmad/bmm/config.yaml and set variable project_name, output_folder, user_name, communication_language",
		"Remember the users name is {user_name}",
		"ALWAYS communicate in {communication_language}",
	}
	if !reflect.DeepEqual(pm.Activation, want) {
		t.Errorf("critical actions %q", pm.Activation)
	}
	if it := menuByTrigger(t, pm, "plan-project"); it.Workflow != "{project-root}/bmad/bmm/workflows/2-plan/workflow.yaml" {
		t.Errorf("run-workflow not stored as Workflow: %+v", it)
	}
	if it := menuByTrigger(t, pm, "validate"); it.Exec != "{project-root}/bmad/core/tasks/validate-workflow.md" {
		t.Errorf("exec %+v", it)
	}
	if !strings.Contains(pm.Persona.Principles, `deeper "why"`) {
		t.Errorf("principles %q", pm.Persona.Principles)
	}

	dev := parseFixture(t, fixtures.Alpha0, "src/modules/bmm/agents/dev.md")
	if len(dev.Prompts) != 2 || dev.Prompts[0].ID != "load-story" || dev.Prompts[1].ID != "status" {
		t.Fatalf("prompts %+v", dev.Prompts)
	}
	if !strings.HasPrefix(dev.Prompts[0].Content, "Ask for the story markdown path if not provided. Steps:\n1) Read COMPLETE story file") || strings.Contains(dev.Prompts[0].Content, "CDATA") {
		t.Errorf("CDATA prompt %q", dev.Prompts[0].Content)
	}
	if it := menuByTrigger(t, dev, "load-story"); it.Action != "#load-story" {
		t.Errorf("load-story %+v", it)
	}
	if it := menuByTrigger(t, dev, "status"); it.Description != "Show current story, status, and loaded context summary" {
		t.Errorf("description not trimmed: %q", it.Description)
	}
	if len(dev.Activation) != 7 {
		t.Errorf("dev critical actions %d", len(dev.Activation))
	}

	orch := parseFixture(t, fixtures.Alpha0, "src/core/agents/bmad-web-orchestrator.md")
	if orch.EntryPoint || len(orch.Rules) < 8 || orch.Rules[0] != "NO external agent files - all agents are in 'agent' XML nodes findable by id" {
		t.Errorf("orchestrator entry %v rules %q", orch.EntryPoint, orch.Rules)
	}
	if !strings.HasPrefix(orch.Activation[1], "1:Read this entire XML node") {
		t.Errorf("<steps><s> activation %q", orch.Activation)
	}
	if !strings.HasPrefix(orch.Persona.Principles, "- Transform into any loaded agent on demand\n- Assess needs") {
		t.Errorf("<p> principles %q", orch.Persona.Principles)
	}
}

// sampleXML is a small agent in the cmds format used by the variant tests.
const sampleXML = `<agent id="x/y.md" name="O&apos;Brien" title="R&amp;D &quot;Lead&quot;" icon="🧪">
  <persona>
    <role>Tester &#8212; of &#x2018;things&#x2019; &amp; stuff</role>
    <identity>Uses a < b and R&D and &unknown; freely; &nbsp;ok</identity>
    <communication_style>Short.</communication_style>
    <principles>Be kind.</principles>
  </persona>
  <critical-actions>
    <i>Load {project-root}/config.yaml</i>
    <i critical="true">Use <example>tags</example> inline and <br> loose ones</i>
  </critical-actions>
  <cmds>
    <c cmd="*help">Show menu</c>
    <c run-workflow="{bundle-root}/workflows/brief/workflow.yaml" cmd="*brief">Write a brief</c>
    <c cmd="*x" exec="{bundle-root}/tasks/x.md" tmpl="{bundle-root}/t.md" data="{bundle-root}/d.csv" validate-workflow="{bundle-root}/w.yaml" action="do it">[XB] Everything</c>
    <c cmd="CP or fuzzy match on create-prd">[ZZ] Create PRD</c>
    <c cmd="*exit">Exit</c>
  </cmds>
</agent>`

func TestParseXMLCmdsSample(t *testing.T) {
	a, err := ParseAgent("agents/sample.md", []byte(sampleXML))
	if err != nil {
		t.Fatal(err)
	}
	if a.Format != FormatXMLCmds || a.ID != "sample" {
		t.Errorf("format %s id %s", a.Format, a.ID)
	}
	if a.Name != "O'Brien" || a.Title != `R&D "Lead"` {
		t.Errorf("attribute entities: %q %q", a.Name, a.Title)
	}
	if a.Persona.Role != "Tester — of ‘things’ & stuff" {
		t.Errorf("role %q", a.Persona.Role)
	}
	if a.Persona.Identity != "Uses a < b and R&D and &unknown; freely; \u00a0ok" {
		t.Errorf("stray characters: %q", a.Persona.Identity)
	}
	if len(a.Activation) != 2 || a.Activation[1] != "Use <example>tags</example> inline and <br> loose ones" {
		t.Errorf("activation %q", a.Activation)
	}
	want := []MenuItem{
		{Cmd: "*help", Trigger: "help", Description: "Show menu"},
		{Cmd: "*brief", Trigger: "brief", Description: "Write a brief", Workflow: "{bundle-root}/workflows/brief/workflow.yaml"},
		{Cmd: "*x", Trigger: "x", Code: "XB", Description: "Everything", Exec: "{bundle-root}/tasks/x.md", Tmpl: "{bundle-root}/t.md", Data: "{bundle-root}/d.csv", Action: "do it", ValidateWorkflow: "{bundle-root}/w.yaml"},
		{Cmd: "CP or fuzzy match on create-prd", Trigger: "create-prd", Code: "CP", Description: "Create PRD"},
		{Cmd: "*exit", Trigger: "exit", Description: "Exit"},
	}
	if !reflect.DeepEqual(a.Menu, want) {
		t.Errorf("menu\n got %+v\nwant %+v", a.Menu, want)
	}
}

// TestParseXMLVariants checks that the fence, frontmatter and file type do
// not change what is parsed.
func TestParseXMLVariants(t *testing.T) {
	variants := map[string]string{
		"bare.md":         sampleXML,
		"fenced.md":       "# Sample\n\nPreamble with a < sign & more.\n\n```xml\n" + sampleXML + "\n```\n\nAfterword <agent-ish> text.\n",
		"fence-nolang.md": "```\n" + sampleXML + "\n```\n",
		"frontmatter.md":  "---\nname: 'sample'\ndescription: 'A sample'\n---\n\nYou must fully embody this agent.\n\n```xml\n" + sampleXML + "\n```\n",
		"crlf.md":         strings.ReplaceAll("```xml\n"+sampleXML+"\n```\n", "\n", "\r\n"),
		"plain.xml":       `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + sampleXML,
		"unterminated.md": "```xml\n" + sampleXML,
	}
	ref, err := ParseAgent("ref.md", []byte(sampleXML))
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range variants {
		t.Run(name, func(t *testing.T) {
			a, err := ParseAgent(name, []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if name == "frontmatter.md" {
				if a.Description != "A sample" {
					t.Errorf("frontmatter description %q", a.Description)
				}
				a.Description = ""
			}
			a.Path, a.ID = ref.Path, ref.ID
			if !reflect.DeepEqual(a, ref) {
				t.Errorf("variant differs:\n got %+v\nwant %+v", a, ref)
			}
		})
	}
}

func TestParseXMLAttributeOrder(t *testing.T) {
	a1, err1 := ParseXMLV6("a.md", []byte(`<agent name="A" title="T" icon="I"><menu><item cmd="*go" workflow="w.yaml" data="d.csv">Go</item></menu></agent>`))
	a2, err2 := ParseXMLV6("a.md", []byte(`<agent icon='I' title='T' name='A'><menu><item data="d.csv" workflow="w.yaml" cmd="*go">Go</item></menu></agent>`))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !reflect.DeepEqual(a1, a2) || a1.Menu[0].Workflow != "w.yaml" || a1.Menu[0].Data != "d.csv" || a1.Name != "A" {
		t.Errorf("attribute order matters:\n%+v\n%+v", a1, a2)
	}
}

func TestParseXMLV6Sections(t *testing.T) {
	src := `<agent id="a" name="Ada" title="Analyst" icon="A">
<activation critical="MANDATORY">
  <step n="1">Load persona</step>
  <step n="2">Load {project-root}/bmad/bmm/config.yaml</step>
  <menu-handlers><handlers><handler type="action">When menu item has: action="#id" → run it</handler></handlers></menu-handlers>
  <rules>
    <r>Stay in character</r>
    <r critical="true">Number all lists</r>
  </rules>
</activation>
<persona><role>R</role><identity>I</identity><communication_style>C</communication_style><principles>P</principles></persona>
<prompts>
  <prompt id="deep"><![CDATA[Think <hard> & long]]></prompt>
</prompts>
<greeting>Hi {user_name}, I'm Ada.</greeting>
<menu>
  <item cmd="*help">Show menu</item>
  <item cmd="*think" action="#deep">Think deeply</item>
  <item cmd="DR or fuzzy match on deep-research" exec="{project-root}/x.md">[DR] Deep research</item>
  <item cmd="*exit">Exit</item>
</menu>
</agent>`
	a, err := ParseAgent("ada.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if a.Format != FormatXMLV6 {
		t.Errorf("format %s", a.Format)
	}
	if !reflect.DeepEqual(a.Activation, []string{"Load persona", "Load {project-root}/bmad/bmm/config.yaml"}) {
		t.Errorf("activation %q", a.Activation)
	}
	if !reflect.DeepEqual(a.Rules, []string{"Stay in character", "Number all lists"}) {
		t.Errorf("<r> rules %q", a.Rules)
	}
	if a.Handlers != `<handlers><handler type="action">When menu item has: action="#id" → run it</handler></handlers>` {
		t.Errorf("handlers %q", a.Handlers)
	}
	if len(a.Prompts) != 1 || a.Prompts[0] != (Prompt{ID: "deep", Content: "Think <hard> & long"}) {
		t.Errorf("prompts %+v", a.Prompts)
	}
	if a.Greeting != "Hi {user_name}, I'm Ada." {
		t.Errorf("greeting %q", a.Greeting)
	}
	if len(a.Menu) != 4 || a.Menu[2].Code != "DR" || a.Menu[2].Trigger != "deep-research" || a.Menu[2].Description != "Deep research" || a.Menu[1].Action != "#deep" {
		t.Errorf("menu %+v", a.Menu)
	}
}

func TestTextRules(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"- one\n- two\n  continued\n- three", []string{"one", "two continued", "three"}},
		{"first line\nsecond line\n\nthird", []string{"first line", "second line", "third"}},
		{"* star\n* item", []string{"star", "item"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := textRules(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("textRules(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseNotAnAgent(t *testing.T) {
	tests := []struct {
		name, src string
		want      error
	}{
		{"readme.md", "# CIS Agents\n\nThe `*brainstorm` command and <b>bold</b> text.\n", ErrNotAgent},
		{"empty.md", "", ErrNotAgent},
		{"agents.md", "<agents><agent-list/></agents>", ErrNotAgent},
		{"hollow.md", "```xml\n<agent></agent>\n```", ErrEmptyAgent},
		{"hollow.agent.yaml", "agent:\n  metadata: {}\n", ErrEmptyAgent},
		{"not.agent.yaml", "name: x\n", ErrNotAgent},
		{"config.yaml", "user_name: x\n", ErrNotAgent},
	}
	for _, tt := range tests {
		a, err := ParseAgent(tt.name, []byte(tt.src))
		if !errors.Is(err, tt.want) || a != nil {
			t.Errorf("%s: got %v, %v; want %v", tt.name, a, err, tt.want)
		}
	}
}

func TestParseCmd(t *testing.T) {
	tests := []struct{ cmd, trigger, code string }{
		{"*create-prd", "create-prd", ""},
		{"create-prd", "create-prd", ""},
		{"CP or fuzzy match on create-prd", "create-prd", "CP"},
		{"cp OR FUZZY MATCH ON create-prd", "create-prd", "cp"},
		{"MH or fuzzy match on menu or help", "menu", "MH"},
		{"*agents [agent-name]", "agents", ""},
		{"*create-doc {template}", "create-doc", ""},
		{"not a code or fuzzy match on x", "not", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if tr, c := parseCmd(tt.cmd); tr != tt.trigger || c != tt.code {
			t.Errorf("parseCmd(%q) = %q, %q; want %q, %q", tt.cmd, tr, c, tt.trigger, tt.code)
		}
	}
	for in, want := range map[string][2]string{
		"[CP] Create PRD": {"CP", "Create PRD"},
		"[QA] Automate":   {"QA", "Automate"},
		"(Optional) Run":  {"", "(Optional) Run"},
		"[not a code] x":  {"", "[not a code] x"},
		"[] x":            {"", "[] x"},
	} {
		if c, d := splitLabel(in); c != want[0] || d != want[1] {
			t.Errorf("splitLabel(%q) = %q, %q", in, c, d)
		}
	}
}
