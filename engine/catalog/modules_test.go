package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

// The 6.12 install with bmm, bmb, cis and tea loads 12 agents with their
// menus and 51 skills with the kinds every source gives: customize.toml,
// bmad-skill-manifest.yaml (cis agents and launchers, bmb skills), never a
// name prefix alone (bmad-agent-builder is a skill), and no problems.
func TestLoadModulesProject(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612M)
	c := loadWithMenus(t, root, map[string]int{
		"analyst": 10, "architect": 2, "dev": 5, "pm": 4, "ux-designer": 1, "bmad-tea": 10,
		"brainstorming-coach": 1, "creative-problem-solver": 1, "design-thinking-coach": 1,
		"innovation-strategist": 1, "presentation-master": 7, "storyteller": 1,
	})
	sophia, _ := c.Find("bmad-cis-agent-storyteller")
	if sophia == nil || sophia.Name != "Sophia" || sophia.Title != "Master Storyteller" || sophia.Icon != "📖" ||
		!strings.Contains(sophia.Persona.CommunicationStyle, "bard") || sophia.Module != "cis" {
		t.Fatalf("storyteller: %+v", sophia)
	}
	if it := sophia.Menu[0]; it.Code != "ST" || it.Skill != "bmad-cis-storytelling" {
		t.Fatalf("storyteller menu (skill without backticks): %+v", it)
	}
	// Caravaggio's capabilities name no skill yet ("todo"): the persona
	// carries them out itself.
	pres, _ := c.Find("presentation-master")
	if it := pres.Menu[0]; it.Skill != "" || it.Prompt == "" {
		t.Fatalf("a todo capability: %+v", it)
	}
	wantKinds(t, c, 51, map[SkillKind]int{SkillAgent: 12, SkillWorkflow: 31, SkillStandalone: 8})
	builder, ok := c.FindSkill(sophia, "bmad-agent-builder")
	if !ok || builder.Kind != SkillStandalone || !builder.Scripts {
		t.Fatalf("bmad-agent-builder: %+v", builder)
	}
	if _, ok := c.Find("builder"); ok {
		t.Fatal("bmad-agent-builder is listed as an agent")
	}
}

// A 6.3 install as its installer wrote it: agent skills without
// customize.toml whose Capabilities tables name skills without backticks,
// an agent-manifest.csv with the persona and a stale path column, a help
// table. Stale paths are no problem; a row naming a skill that is not
// installed is; a name prefix alone makes no agent.
func TestLoad63Install(t *testing.T) {
	root := t.TempDir()
	agentMD := func(name, title string) string {
		return "---\nname: bmad-agent-pm\ndescription: " + title + ".\n---\n\n# " + name + "\n\n## Overview\n\nAct as " + name + ".\n\n" +
			"## Capabilities\n\n| Code | Description | Skill |\n|------|-------------|-------|\n" +
			"| CP | Create a PRD | bmad-create-prd |\n| VP | Validate a PRD | bmad-validate-prd |\n\n## On Activation\n\nGreet the user.\n"
	}
	writeFiles(t, root, map[string]string{
		"_bmad/_config/manifest.yaml": "installation:\n  version: 6.3.0\nides:\n  - cursor\n",
		"_bmad/_config/agent-manifest.csv": "name,displayName,title,icon,capabilities,role,identity,communicationStyle,principles,module,path,canonicalId\n" +
			`"pm","John","Product Manager","📋","PRDs","Product Manager","Veteran PM.","Asks WHY.","Ship small.","bmm","_bmad/bmm/agents/bmad-agent-pm/SKILL.md","bmad-agent-pm"` + "\n" +
			`"sm","Bob","Scrum Master","🏃","stories","SM","Servant leader.","Crisp.","Clear stories.","bmm","_bmad/bmm/agents/bmad-agent-sm/SKILL.md","bmad-agent-sm"` + "\n",
		"_bmad/_config/skill-manifest.csv": "canonicalId,name,description,module,path\n" +
			`"bmad-agent-pm","bmad-agent-pm","Product manager.","bmm","_bmad/bmm/agents/bmad-agent-pm/SKILL.md"` + "\n" +
			`"bmad-create-prd","bmad-create-prd","Create a PRD.","bmm","_bmad/bmm/workflows/bmad-create-prd/SKILL.md"` + "\n",
		"_bmad/bmm/config.yaml":                      "user_name: Ana\n",
		"_bmad/bmm/module-help.csv":                  "module,skill,display-name,menu-code,description\nbmm,bmad-create-prd,Create PRD,CP,Create a PRD\nbmm,bmad-create-ux,Create UX,CU,Plan the UX\n",
		".cursor/skills/bmad-agent-pm/SKILL.md":      agentMD("John", "Product manager"),
		".cursor/skills/bmad-agent-notes/SKILL.md":   "---\nname: bmad-agent-notes\ndescription: Notes about agents.\n---\n# Notes\n",
		".cursor/skills/bmad-create-prd/SKILL.md":    "---\nname: bmad-create-prd\ndescription: Create a PRD.\n---\nFollow the instructions in [workflow.md](workflow.md).\n",
		".cursor/skills/bmad-create-prd/workflow.md": "# Create PRD\n",
		".cursor/skills/bmad-validate-prd/SKILL.md":  "---\nname: bmad-validate-prd\ndescription: Validate a PRD.\n---\n# Validate\n",
	})
	c := Load(Options{BMADRoots: []string{root}})
	pm, ok := c.Find("pm")
	if !ok || pm.Name != "John" || pm.Title != "Product Manager" || pm.Icon != "📋" || pm.Persona.Identity != "Veteran PM." {
		t.Fatalf("6.3 agent: %+v (problems %+v)", pm, c.Problems)
	}
	if len(pm.Menu) != 2 || pm.Menu[0].Skill != "bmad-create-prd" || pm.Menu[1].Skill != "bmad-validate-prd" {
		t.Fatalf("6.3 menu: %+v", pm.Menu)
	}
	if _, ok := c.Find("notes"); ok {
		t.Fatal("a name prefix alone made an agent")
	}
	// The stale path of pm's row is no problem; sm's agent is missing.
	wantProblems(t, c, "bmad-create-ux, which is not installed", "agent-manifest.csv: file not found")
}

// Invalid frontmatter is reported with the YAML error and its line in the
// file, not as a missing name; the other skills load.
func TestSkillFrontmatterYAMLError(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"ok/SKILL.md":  "---\nname: ok\ndescription: Fine.\n---\n# OK\n",
		"bad/SKILL.md": "---\nname: bad\ndescription: Use when: the user asks: twice\n---\n# Bad\n",
	})
	c := Load(Options{Skills: dir})
	if len(c.Skills) != 1 || len(c.Problems) != 1 {
		t.Fatalf("skills %d, problems %+v", len(c.Skills), c.Problems)
	}
	r := c.Problems[0].Reason
	if !strings.Contains(r, "frontmatter is invalid YAML: line 3:") || !strings.Contains(r, "mapping values are not allowed") {
		t.Fatalf("reason: %q", r)
	}
}

// A generated collection loads completely: skills in dot-folders, a skill
// folder that is a symbolic link, a link cycle (reported, not followed),
// nothing from .git; a --skills folder that is itself a link loads the
// same; a link out of the folder is reported, since the sandbox would
// refuse it.
func TestSkillsCollectionLayouts(t *testing.T) {
	dir := fixtures.SkillCollection(t, 40)
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"far/SKILL.md": "---\nname: far\ndescription: Outside.\n---\n"})
	if err := os.Symlink(filepath.Join(outside, "far"), filepath.Join(dir, "far")); err != nil {
		t.Skip(err)
	}
	via := filepath.Join(t.TempDir(), "skills-link")
	if err := os.Symlink(dir, via); err != nil {
		t.Skip(err)
	}
	for _, opt := range []string{dir, via} {
		c := Load(Options{Skills: opt})
		if len(c.Skills) != 40 {
			t.Fatalf("%s: %d skills, want 40; problems %+v", opt, len(c.Skills), c.Problems)
		}
		byName := map[string]*Skill{}
		for _, s := range c.Skills {
			byName[s.Name] = s
		}
		if s := byName["skill-0000"]; s == nil || s.Virtual != "/skills/.curated/skill-0000" {
			t.Fatalf("dot-folder skill: %+v", s)
		}
		if s := byName["skill-0039"]; s == nil || s.Virtual != "/skills/linked/skill-0039" {
			t.Fatalf("linked skill: %+v", s)
		}
		if byName["git-hook"] != nil || byName["far"] != nil {
			t.Fatal("a skill from .git or from outside the folder loaded")
		}
		wantProblems(t, c, "loop: link loops back", "far: link leads out of the skills folder")
		if g, ok := c.Find(GenericAgentID); !ok || len(g.Menu) != 40 {
			t.Fatalf("generic agent: %+v", g)
		}
	}
}

// wantProblems fails unless the catalog's problems are exactly one for each
// of want, matched as "file: reason" in any order.
func wantProblems(t *testing.T, c *Catalog, want ...string) {
	t.Helper()
	var reasons []string
	for _, p := range c.Problems {
		reasons = append(reasons, filepath.Base(p.Path)+": "+p.Reason)
	}
	all := strings.Join(reasons, "\n")
	ok := len(c.Problems) == len(want)
	for _, w := range want {
		ok = ok && strings.Contains(all, w)
	}
	if !ok {
		t.Fatalf("problems: %q, want %q", reasons, want)
	}
}

// wantKinds fails unless the catalog has n skills, with these many of each
// kind.
func wantKinds(t *testing.T, c *Catalog, n int, want map[SkillKind]int) {
	t.Helper()
	kinds := map[SkillKind]int{}
	for _, s := range c.Skills {
		kinds[s.Kind]++
	}
	if len(c.Skills) != n || len(kinds) != len(want) {
		t.Fatalf("%d skills, kinds %v", len(c.Skills), kinds)
	}
	for k, m := range want {
		if kinds[k] != m {
			t.Fatalf("%d skills, kinds %v, want %v", len(c.Skills), kinds, want)
		}
	}
}
