package catalog

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

// BMAD 6.2 (cursor): each agent's skill is a stub that loads the compiled
// agent file. That file is the agent, with its XML menu, persona and
// activation, under the manifest's name and also the stub's; its
// exec="skill:NAME" items start skills of the project, which it may load.
// No problem is reported.
func TestLoad62StubSkills(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V62)
	c := Load(Options{BMADRoots: []string{root}})
	if len(c.Problems) != 0 || len(c.Agents) != 9 {
		t.Fatalf("agents %v, problems %+v", ids(c.Agents), c.Problems)
	}
	pm, ok := c.Find("bmad-pm")
	if !ok || pm.ID != "pm" || pm.Format != FormatXMLV6 || pm.SkillName != "bmad-pm" || pm.Name != "John" ||
		pm.Path != filepath.Join(root, "_bmad", "bmm", "agents", "pm.md") || pm.Module != "bmm" || len(pm.Activation) == 0 {
		t.Fatalf("pm: %+v", pm)
	}
	if pm.Home.ConfigPath != filepath.Join(root, "_bmad", "bmm", "config.yaml") || pm.Home.OutputFolder != "_bmad-output" {
		t.Errorf("pm home: %+v", pm.Home)
	}
	cp := pm.Menu[2]
	if cp.Code != "CP" || cp.Exec != "skill:bmad-create-prd" || cp.Skill != "bmad-create-prd" {
		t.Errorf("CP: %+v", cp)
	}
	if sk, ok := c.FindSkill(pm, "bmad-create-prd"); !ok || sk.Kind != SkillStandalone {
		t.Errorf("pm cannot load bmad-create-prd: %+v", sk)
	}
	if tw, ok := c.Find("tech-writer"); !ok || tw.SkillName != "bmad-tech-writer" || !strings.HasSuffix(tw.Path, "agents/tech-writer/tech-writer.md") {
		t.Errorf("tech-writer: %+v", tw)
	}
	stub, ok := c.FindSkill(pm, "bmad-pm")
	if !ok || stub.Kind != SkillAgent || stub.Module != "bmm" {
		t.Errorf("the stub skill: %+v", stub)
	}
}

// A stub whose agent file no manifest lists is loaded from that file; a
// stub whose file is missing is a problem naming both.
func TestStubWithoutManifest(t *testing.T) {
	root := t.TempDir()
	stub := func(name, file string) string {
		return "---\nname: " + name + "\ndescription: " + name + " agent\n---\n\n<agent-activation CRITICAL=\"TRUE\">\n1. LOAD the FULL agent file from {project-root}/" + file + "\n2. READ its entire contents\n</agent-activation>\n"
	}
	writeFiles(t, root, map[string]string{
		"_bmad/_config/manifest.yaml":             "installation:\n  version: 6.1.0\nides:\n  - claude-code\n",
		"_bmad/bmm/config.yaml":                   "user_name: Ana\n",
		"_bmad/bmm/agents/pm.md":                  "---\nname: pm\n---\n```xml\n<agent id=\"pm\" name=\"John\" title=\"PM\" icon=\"📋\">\n<persona><role>PM</role></persona>\n<menu>\n<item cmd=\"CP or fuzzy match on create-prd\" exec=\"skill:bmad-create-prd\">[CP] Create PRD</item>\n</menu>\n</agent>\n```\n",
		".claude/skills/bmad-pm/SKILL.md":         stub("bmad-pm", "_bmad/bmm/agents/pm.md"),
		".claude/skills/bmad-gone/SKILL.md":       stub("bmad-gone", "_bmad/bmm/agents/gone.md"),
		".claude/skills/bmad-create-prd/SKILL.md": "---\nname: bmad-create-prd\ndescription: Create a PRD.\n---\n\nFollow the instructions in ./workflow.md.\n",
	})
	c := Load(Options{BMADRoots: []string{root}})
	pm, ok := c.Find("bmad-pm")
	if !ok || pm.ID != "pm" || pm.Format != FormatXMLV6 || len(pm.Menu) != 1 || pm.Menu[0].Skill != "bmad-create-prd" {
		t.Fatalf("pm: %+v (problems %+v)", pm, c.Problems)
	}
	wantProblems(t, c, "skill bmad-gone loads the agent file _bmad/bmm/agents/gone.md, which does not exist")
}

// Game Dev Studio on 6.12: Paige's "Skill or Prompt" table gives skill and
// prompt-file items, and the problems are exactly the true ones: the
// module's help rows name a quick-prototype workflow file and five skills
// the install does not hold (each once, from the module's own table, no
// phase read as a skill), and three agents offer the missing
// gds-quick-prototype.
func TestLoadGDSProblems(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612G)
	c := Load(Options{BMADRoots: []string{root}})
	wantProblems(t, c,
		"module-help.csv: line 3 names the workflow file _bmad/gds/workflows/gds-quick-flow/quick-prototype/workflow.md, which does not exist",
		"module-help.csv: line 9 names the skill gds-market-research, which is not installed",
		"module-help.csv: line 11 names the skill gds-technical-research, which is not installed",
		"module-help.csv: line 16 names the skill gds-create-prd, which is not installed",
		"module-help.csv: line 17 names the skill gds-validate-prd, which is not installed",
		"module-help.csv: line 18 names the skill gds-edit-prd, which is not installed",
		"SKILL.md: menu item QP names the skill gds-quick-prototype, which is not installed",
		"SKILL.md: menu item QP names the skill gds-quick-prototype, which is not installed",
		"SKILL.md: menu item QP names the skill gds-quick-prototype, which is not installed",
	)
	for _, p := range c.Problems {
		if strings.Contains(p.Reason, "anytime") || strings.HasSuffix(p.Path, "bmad-help.csv") {
			t.Errorf("false problem: %+v", p)
		}
	}
	paige, ok := c.Find("gds-agent-tech-writer")
	if !ok || len(paige.Menu) != 6 {
		t.Fatalf("Paige: %+v", paige)
	}
	want := []MenuItem{
		{Cmd: "DP", Code: "DP", Description: "Generate comprehensive project documentation (brownfield analysis, architecture scanning)", Skill: "gds-document-project"},
		{Cmd: "WD", Code: "WD", Description: "Author a document following documentation best practices through guided conversation", Exec: "/project/.agents/skills/gds-agent-tech-writer/write-document.md"},
	}
	if !reflect.DeepEqual(paige.Menu[:2], want) {
		t.Errorf("Paige's menu: %+v", paige.Menu[:2])
	}
}

// Help tables in any layout: rows of the older 13-column layout under the
// newer header and rows of the newer layout under the older header are
// read in their own layout. Only true problems are reported, once each,
// in the table they were written in: a missing workflow file and skills
// the install lacks; an agent source the installer compiled (x.agent.yaml
// with x.md beside it) is there.
func TestHelpTableLayouts(t *testing.T) {
	root := t.TempDir()
	newHeader := "module,skill,display-name,menu-code,description,action,args,phase,preceded-by,followed-by,required,output-location,outputs\n"
	oldHeader := "module,phase,name,code,sequence,workflow-file,command,required,agent,options,description,output-location,outputs,\n"
	old16 := "module,phase,name,code,sequence,workflow-file,command,required,agent-name,agent-command,agent-display-name,agent-title,options,description,output-location,outputs\n"
	writeFiles(t, root, map[string]string{
		"_bmad/_config/manifest.yaml": "installation:\n  version: 6.12.0\nides:\n  - claude-code\n",
		"_bmad/_config/bmad-help.csv": newHeader +
			"BMad Method,_meta,,,,,,,,,false,https://docs.bmad-method.org/,\n" +
			"BMad Method,bmad-prd,Create PRD,PRD,Write a PRD.,,,2-planning,,,true,planning_artifacts,prd\n" +
			"gds,anytime,Quick Prototype,QP,,_bmad/gds/workflows/quick-prototype/workflow.md,bmad-gds-quick-prototype,false,game-solo-dev,Create Mode,Prototype.,,\n" +
			"gds,1-preproduction,Market Research,MR,15,skill:gds-market-research,bmad-gds-market-research,false,game-designer,Create Mode,Research.,planning_artifacts,research documents\n" +
			"gds,2-design,Game Brief,GB,20,skill:bmad-prd,bmad-gds-brief,false,game-designer,Create Mode,Brief.,output_folder,game brief\n",
		"_bmad/gds/module-help.csv": oldHeader +
			"gds,1-preproduction,Market Research,MR,15,skill:gds-market-research,bmad-gds-market-research,false,game-designer,Create Mode,Research.,planning_artifacts,research documents,\n" +
			"gds,anytime,Write Document,WD,,_bmad/gds/agents/tw/tw.agent.yaml,,false,tech-writer,,Write.,project-knowledge,document,\n",
		"_bmad/gds/agents/tw/tw.md": "# compiled\n",
		"_bmad/bmm/module-help.csv": old16 +
			"BMad Method,bmad-prd,Write Document,WD,Write a document.,write,,anytime,,,,,,false,project-knowledge,document\n" +
			"BMad Method,bmad-nope,Explain,EC,Explain a concept.,explain,[topic],anytime,,,,,,false,project_knowledge,explanation\n",
		".claude/skills/bmad-prd/SKILL.md": "---\nname: bmad-prd\ndescription: Write a PRD.\n---\n# PRD\n",
	})
	c := Load(Options{BMADRoots: []string{root}})
	wantProblems(t, c,
		"bmad-help.csv: line 4 names the workflow file _bmad/gds/workflows/quick-prototype/workflow.md, which does not exist",
		"module-help.csv: line 2 names the skill gds-market-research, which is not installed",
		"module-help.csv: line 3 names the skill bmad-nope, which is not installed",
	)
	outs := HelpOutputs(root)
	byName := map[string]HelpOutput{}
	for _, o := range outs {
		byName[o.Name] = o
	}
	if o := byName["Game Brief"]; o.Skill != "bmad-prd" || o.Phase != "2-design" || o.Location != "output_folder" || o.Pattern != "game brief" {
		t.Errorf("an older row under the newer header: %+v", o)
	}
	if o := byName["Create PRD"]; o.Skill != "bmad-prd" || o.Phase != "2-planning" || o.Pattern != "prd" {
		t.Errorf("a newer row: %+v", o)
	}
}

// A menu item that names a -preview or older name of an installed skill
// resolves to it (LookupSkill), with no problem; one that names neither is
// a problem naming both names.
func TestSkillVariantNames(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"_bmad/_config/manifest.yaml": "installation:\n  version: 6.3.0\nides:\n  - claude-code\n",
		".claude/skills/bmad-agent-analyst/SKILL.md": "---\nname: bmad-agent-analyst\ndescription: Analyst.\n---\n# Mary\n\n## Capabilities\n\n" +
			"| Code | Description | Skill |\n|---|---|---|\n| CB | Brief | bmad-product-brief-preview |\n| CP | PRD | bmad-bmm-create-prd |\n| XX | Gone | bmad-gone-preview |\n",
		".claude/skills/bmad-agent-analyst/bmad-skill-manifest.yaml": "type: agent\n",
		".claude/skills/bmad-product-brief/SKILL.md":                 "---\nname: bmad-product-brief\ndescription: Brief.\n---\n# Brief\n",
		".claude/skills/bmad-create-prd/SKILL.md":                    "---\nname: bmad-create-prd\ndescription: PRD.\n---\n# PRD\n",
		".claude/skills/bmad-agent-tech-writer/SKILL.md": "---\nname: bmad-agent-tech-writer\ndescription: Writer.\n---\n# Paige\n\n## Capabilities\n\n" +
			"| Code | Description | Skill or Prompt |\n|---|---|---|\n| WD | Write | prompt: write-document.md |\n| MG | Mermaid | prompt: mermaid-gen.md |\n| DP | Document | skill: bmad-create-prd |\n",
		".claude/skills/bmad-agent-tech-writer/bmad-skill-manifest.yaml": "type: agent\n",
		".claude/skills/bmad-agent-tech-writer/write-document.md":        "# Write\n",
	})
	c := Load(Options{BMADRoots: []string{root}})
	wantProblems(t, c, "menu item XX names the skill bmad-gone-preview, which is not installed, nor is bmad-gone",
		"menu item MG names the prompt mermaid-gen.md, which is not beside its SKILL.md")
	if tw, _ := c.Find("tech-writer"); tw == nil || len(tw.Menu) != 3 || tw.Menu[0].Exec != "/project/.claude/skills/bmad-agent-tech-writer/write-document.md" || tw.Menu[2].Skill != "bmad-create-prd" {
		t.Errorf("tech-writer: %+v", tw)
	}
	a, _ := c.Find("analyst")
	for name, want := range map[string]string{"bmad-product-brief-preview": "bmad-product-brief", "bmad-bmm-create-prd": "bmad-create-prd"} {
		sk, variant, ok := c.LookupSkill(a, name)
		if !ok || !variant || sk.Name != want {
			t.Errorf("LookupSkill(%s) = %+v, %v, %v", name, sk, variant, ok)
		}
	}
	if sk, variant, ok := c.LookupSkill(a, "bmad-product-brief"); !ok || variant || sk.Name != "bmad-product-brief" {
		t.Errorf("an installed name: %+v, %v, %v", sk, variant, ok)
	}
}

// v4 expansion packs: every .bmad-* folder beside .bmad-core and every
// bmad-* folder under expansion-packs/ is a source, its agents named with
// the pack, so the pack's own orchestrator is no clash. "*cmd - text"
// splits into command and description, and CommandFiles names the task,
// template and checklist a command runs, task first.
func TestV4ExpansionPacks(t *testing.T) {
	agent := func(id string, commands, deps string) string {
		return "# " + id + "\n\n```yaml\nagent:\n  name: " + id + "\n  id: " + id + "\n  title: T\npersona:\n  role: R\ncommands:\n" + commands + "dependencies:\n" + deps + "```\n"
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		".bmad-core/core-config.yaml":            "devStoryLocation: docs/stories\n",
		".bmad-core/agents/bmad-orchestrator.md": agent("bmad-orchestrator", "  - help: Show help\n", "  tasks:\n    - kb.md\n"),
		".bmad-core/agents/pm.md": agent("pm", "  - help: Show help\n  - create-prd: run task create-doc.md with template prd-tmpl.yaml\n  - correct-course: execute the correct-course task\n",
			"  tasks:\n    - create-doc.md\n    - correct-course.md\n  templates:\n    - prd-tmpl.yaml\n"),
		".bmad-core/tasks/create-doc.md":            "# Create doc\n",
		".bmad-core/tasks/correct-course.md":        "# Correct course\n",
		".bmad-core/templates/prd-tmpl.yaml":        "template: prd\n",
		".bmad-stories/config.yaml":                 "name: bmad-stories\nslashPrefix: bmad-st\n",
		".bmad-stories/agents/bmad-orchestrator.md": agent("bmad-orchestrator", "  - '*help - Show numbered list of commands'\n", "  tasks:\n    - kb.md\n"),
		".bmad-stories/agents/editor.md": agent("editor",
			"  - '*outline - Run task create-doc.md with template outline-tmpl.yaml'\n  - '*check - Run task execute-checklist.md with checklist scene-checklist'\n  - '*yolo - Toggle Yolo Mode'\n",
			"  tasks:\n    - create-doc.md\n    - execute-checklist.md\n  templates:\n    - outline-tmpl.yaml\n  checklists:\n    - scene-checklist.md\n"),
		".bmad-stories/tasks/create-doc.md":           "# Create doc\n",
		".bmad-stories/tasks/execute-checklist.md":    "# Checklist\n",
		".bmad-stories/templates/outline-tmpl.yaml":   "template: outline\n",
		".bmad-stories/checklists/scene-checklist.md": "# Scenes\n",
	})
	c := Load(Options{BMADRoots: []string{root}})
	if len(c.Problems) != 0 || strings.Join(ids(c.Agents), ",") != "bmad-orchestrator,pm,stories/bmad-orchestrator,stories/editor" {
		t.Fatalf("agents %v, problems %+v", ids(c.Agents), c.Problems)
	}
	ed, ok := c.Find("editor")
	if !ok || ed.Module != "bmad-stories" || ed.Home.BundleRoot != filepath.Join(root, ".bmad-stories") || ed.Home.Config["slashPrefix"] != "bmad-st" {
		t.Fatalf("editor: %+v", ed)
	}
	if it := ed.Menu[0]; it.Cmd != "*outline" || it.Trigger != "outline" || it.Description != "Run task create-doc.md with template outline-tmpl.yaml" {
		t.Errorf("split command: %+v", it)
	}
	files := map[string][]string{
		"outline": {"{bundle-root}/tasks/create-doc.md", "{bundle-root}/templates/outline-tmpl.yaml"},
		"check":   {"{bundle-root}/tasks/execute-checklist.md", "{bundle-root}/checklists/scene-checklist.md"},
		"yolo":    nil,
	}
	for _, it := range ed.Menu {
		if got := ed.CommandFiles(it); !reflect.DeepEqual(got, files[it.Trigger]) {
			t.Errorf("%s runs %v, want %v", it.Trigger, got, files[it.Trigger])
		}
	}
	pm, _ := c.Find("pm")
	for trigger, want := range map[string][]string{
		"create-prd":     {"{bundle-root}/tasks/create-doc.md", "{bundle-root}/templates/prd-tmpl.yaml"},
		"correct-course": {"{bundle-root}/tasks/correct-course.md"},
		"help":           nil,
	} {
		if got := pm.CommandFiles(menuByTrigger(t, pm, trigger)); !reflect.DeepEqual(got, want) {
			t.Errorf("pm %s runs %v, want %v", trigger, got, want)
		}
	}

	// BMAD's own tree: bmad-core/ and expansion-packs/bmad-*/.
	tree := t.TempDir()
	writeFiles(t, tree, map[string]string{
		"bmad-core/core-config.yaml":              "x: 1\n",
		"bmad-core/agents/pm.md":                  agent("pm", "  - help: Show help\n", "  tasks:\n    - a.md\n"),
		"expansion-packs/bmad-game/agents/dev.md": agent("dev", "  - help: Show help\n", "  tasks:\n    - a.md\n"),
		"expansion-packs/notes/agents/ignored.md": agent("ignored", "  - help: Show help\n", "  tasks:\n    - a.md\n"),
		"expansion-packs/bmad-empty/README.md":    "no agents\n",
	})
	c = Load(Options{BMADRoots: []string{tree}})
	if len(c.Problems) != 0 || strings.Join(ids(c.Agents), ",") != "game/dev,pm" {
		t.Fatalf("expansion-packs layout: agents %v, problems %+v", ids(c.Agents), c.Problems)
	}
}

// The official installer's v4 with the creative-writing pack (made by
// .ci/bmad-installs): 10 core agents and the pack's 11, no problem.
func TestV4CreativeWritingInstall(t *testing.T) {
	root := fixtures.Install(t, fixtures.V4CW)
	c := Load(Options{BMADRoots: []string{root}})
	if len(c.Problems) != 0 || len(c.Agents) != 21 {
		t.Fatalf("agents %v, problems %+v", ids(c.Agents), c.Problems)
	}
	pa, ok := c.Find("plot-architect")
	if !ok || pa.ID != "creative-writing/plot-architect" || pa.Module != "bmad-creative-writing" {
		t.Fatalf("plot-architect: %+v", pa)
	}
	out := menuByTrigger(t, pa, "create-outline")
	if got := pa.CommandFiles(out); !reflect.DeepEqual(got, []string{"{bundle-root}/tasks/create-doc.md", "{bundle-root}/templates/story-outline-tmpl.yaml"}) {
		t.Errorf("create-outline runs %v", got)
	}
}
