package catalog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fixtures"
)

// The 6.12 project loads as the installer left it: 5 agents with their full
// menus, 29 skills with their kinds, and no problems.
func TestLoadSkillsProject(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612)
	c := loadWithMenus(t, root, map[string]int{"analyst": 10, "architect": 2, "dev": 5, "pm": 4, "ux-designer": 1})
	for _, a := range c.Agents {
		id := a.ID
		if a.Format != FormatSkill || !a.EntryPoint || a.Problem != "" || a.SkillName != "bmad-agent-"+id {
			t.Errorf("%s: format %s entry %v problem %q skill %q", id, a.Format, a.EntryPoint, a.Problem, a.SkillName)
		}
		for _, it := range a.Menu {
			if it.Code == "" || it.Description == "" || (it.Skill == "") == (it.Prompt == "") {
				t.Errorf("%s: menu item %+v lacks a code, a description, or exactly one of skill and prompt", id, it)
			}
		}
		// The full skill name works wherever an id is accepted.
		if b, ok := c.Find("bmad-agent-" + id); !ok || b != a {
			t.Errorf("Find(bmad-agent-%s) = %v, %v", id, b, ok)
		}
	}
	pm, _ := c.Find("pm")
	if pm.Name != "John" || pm.Title != "Product Manager" || pm.Icon != "📋" || pm.Module != "bmm" {
		t.Errorf("pm identity: %q %q %q %q", pm.Name, pm.Title, pm.Icon, pm.Module)
	}
	if !strings.Contains(pm.Persona.Role, "validated PRD") || strings.Count(pm.Persona.Principles, "\n- ")+1 != 3 {
		t.Errorf("pm persona: %+v", pm.Persona)
	}
	if it := pm.Menu[0]; it.Code != "PRD" || it.Skill != "bmad-prd" {
		t.Errorf("pm menu[0] = %+v", it)
	}
	if pm.Fields["agent.icon"] != "📋" || !strings.HasPrefix(pm.Fields["agent.menu"], "[{") {
		t.Errorf("pm fields: icon %q menu %.40q", pm.Fields["agent.icon"], pm.Fields["agent.menu"])
	}
	h := pm.Home
	if h.Config["user_name"] != "Ines" || h.Config["planning_artifacts"] != "{project-root}/_bmad-output/planning-artifacts" || h.OutputFolder != "_bmad-output" {
		t.Errorf("home config: %+v, output folder %q", h.Config, h.OutputFolder)
	}
	analyst, _ := c.Find("analyst")
	prompts := 0
	for _, it := range analyst.Menu {
		if it.Prompt != "" {
			prompts++
		}
	}
	if prompts != 6 {
		t.Errorf("analyst has %d prompt items, want 6", prompts)
	}

	kinds := map[SkillKind]int{}
	for _, s := range c.Skills {
		kinds[s.Kind]++
		if !strings.HasPrefix(s.Virtual, "/project/.claude/skills/") || s.Description == "" || s.Module == "" {
			t.Errorf("skill %s: virtual %q description %q module %q", s.Name, s.Virtual, s.Description, s.Module)
		}
	}
	if len(c.Skills) != 29 || kinds[SkillAgent] != 5 || kinds[SkillWorkflow] != 22 || kinds[SkillStandalone] != 2 {
		t.Errorf("skills = %d, kinds %v; want 29: 5 agent, 22 workflow, 2 standalone", len(c.Skills), kinds)
	}
	for _, name := range []string{"bmad-help", "bmad-customize"} {
		if s, ok := c.FindSkill(pm, name); !ok || s.Kind != SkillStandalone {
			t.Errorf("%s: %+v, %v", name, s, ok)
		}
	}
	if s, _ := c.FindSkill(pm, "bmad-build"); s == nil || s.Needs == "" {
		t.Errorf("bmad-build is not listed with its limitation: %+v", s)
	}
	if s, _ := c.FindSkill(pm, "bmad-prd"); s == nil || s.Needs != "" || s.Kind != SkillWorkflow {
		t.Errorf("bmad-prd: %+v", s)
	}
}

// The project is found from _bmad itself too, and a stale manifest path
// column is never used.
func TestLoadSkillsProjectFromBMADFolder(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	c := Load(Options{BMADRoots: []string{filepath.Join(root, "_bmad")}})
	if len(c.Agents) != 5 || len(c.Skills) != 29 {
		t.Fatalf("from _bmad: %d agents, %d skills; problems %+v", len(c.Agents), len(c.Skills), c.Problems)
	}
}

// Identical copies in several tools' folders count once; a copy that
// differs is a problem naming the skill, and the first copy is used.
func TestSkillCopies(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	fixtures.CopyDir(t, filepath.Join(root, ".claude/skills"), filepath.Join(root, ".agents/skills"))
	fixtures.CopyDir(t, filepath.Join(root, ".claude/skills/bmad-prd"), filepath.Join(root, ".cursor/skills/bmad-prd"))
	c := Load(Options{BMADRoots: []string{root}})
	if len(c.Skills) != 29 || len(c.Agents) != 5 || len(c.Problems) != 0 {
		t.Fatalf("identical copies: %d skills, %d agents, problems %+v", len(c.Skills), len(c.Agents), c.Problems)
	}
	p := filepath.Join(root, ".agents/skills/bmad-help/SKILL.md")
	if err := os.WriteFile(p, []byte("---\nname: bmad-help\ndescription: changed\n---\n# changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c = Load(Options{BMADRoots: []string{root}})
	if len(c.Skills) != 29 || len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Reason, "bmad-help differs") {
		t.Fatalf("differing copy: %d skills, problems %+v", len(c.Skills), c.Problems)
	}
	pm, _ := c.Find("pm")
	if s, _ := c.FindSkill(pm, "bmad-help"); s == nil || strings.Contains(s.Description, "changed") {
		t.Fatalf("the differing copy was used: %+v", s)
	}
}

// An invalid override is a problem with its path and line, and the agent
// stays listed with the reason it cannot start; it never falls back to the
// defaults. Other agents are untouched.
func TestSkillInvalidOverride(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	writeFiles(t, root, map[string]string{"_bmad/custom/bmad-agent-pm.toml": "[agent]\nicon = \"🚀\"\nprinciples = [\"unterminated\"\n"})
	c := Load(Options{BMADRoots: []string{root}})
	pm, ok := c.Find("pm")
	if !ok {
		t.Fatal("pm is not listed")
	}
	if !strings.Contains(pm.Problem, "_bmad/custom/bmad-agent-pm.toml:") || strings.Contains(pm.Problem, root) {
		t.Fatalf("pm problem = %q", pm.Problem)
	}
	found := false
	for _, p := range c.Problems {
		if strings.HasSuffix(p.Path, "bmad-agent-pm.toml") && strings.Contains(p.Reason, ":3") || strings.Contains(p.Reason, ":4") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no problem with the file and line: %+v", c.Problems)
	}
	if a, _ := c.Find("analyst"); a.Problem != "" || len(a.Menu) != 10 {
		t.Fatalf("analyst affected: %q, %d items", a.Problem, len(a.Menu))
	}
}

// A team override reaches the agent: a new icon, an appended principle, a
// menu item replaced by code in place and a new one appended.
func TestSkillTeamOverride(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	writeFiles(t, root, map[string]string{"_bmad/custom/bmad-agent-pm.toml": `[agent]
icon = "🚀"
principles = ["Write it down."]

[[agent.menu]]
code = "CE"
description = "Epics, our way"
skill = "bmad-spec"

[[agent.menu]]
code = "RB"
description = "Review the brief"
prompt = "Invoke the ` + "`bmad-review`" + ` skill on the product brief."
`, "_bmad/custom/config.toml": "[core]\nuser_name = \"Team\"\n"})
	c := Load(Options{BMADRoots: []string{root}})
	pm, _ := c.Find("pm")
	if pm.Problem != "" || pm.Icon != "🚀" || !strings.HasSuffix(pm.Persona.Principles, "- Write it down.") {
		t.Fatalf("override not applied: problem %q icon %q principles %q", pm.Problem, pm.Icon, pm.Persona.Principles)
	}
	if len(pm.Menu) != 5 || pm.Menu[1].Code != "CE" || pm.Menu[1].Skill != "bmad-spec" || pm.Menu[4].Code != "RB" {
		t.Fatalf("menu = %+v", pm.Menu)
	}
	if pm.Home.Config["user_name"] != "Team" {
		t.Fatalf("central override: user_name = %q", pm.Home.Config["user_name"])
	}
}

// A 6.3 install (skill folders without customize.toml) still gives its
// agents, with the menu table of SKILL.md; shims are aliases of the skill
// they name.
func TestSkillsWithoutCustomize(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"_bmad/_config/manifest.yaml": "ides:\n  - codex\n",
		"_bmad/bmm/config.yaml":       "user_name: Ana\nplanning_artifacts: \"{project-root}/_bmad-output/planning\"\n",
		".agents/skills/bmad-agent-pm/SKILL.md": "---\nname: bmad-agent-pm\ndescription: Product manager.\n---\n# John — Product Manager\n\n" +
			"## Menu\n\n| Code | Description | Skill |\n|---|---|---|\n| CP | Create a PRD | `bmad-create-prd` |\n| VP | Validate a PRD | `bmad-validate-prd` |\n",
		".agents/skills/bmad-create-prd/SKILL.md":   "---\nname: bmad-create-prd\ndescription: Create a PRD.\n---\n# Create\n",
		".agents/skills/bmad-validate-prd/SKILL.md": "---\nname: bmad-validate-prd\ndescription: Validate a PRD.\nmetadata:\n  lifecycle: shim\n---\nForwards to `bmad-create-prd` with the validate intent.\n",
	})
	c := Load(Options{BMADRoots: []string{root}})
	pm, ok := c.Find("pm")
	if !ok || pm.Name != "John" || pm.Title != "Product Manager" || len(pm.Menu) != 2 || pm.Menu[0].Skill != "bmad-create-prd" {
		t.Fatalf("6.3 agent: %+v (problems %+v)", pm, c.Problems)
	}
	if pm.Home.Config["user_name"] != "Ana" {
		t.Fatalf("6.3 config: %+v", pm.Home.Config)
	}
	s, ok := c.FindSkill(pm, "bmad-validate-prd")
	if !ok || s.Kind != SkillAlias || s.AliasOf != "bmad-create-prd" {
		t.Fatalf("shim: %+v", s)
	}
}

// A plain folder of Agent Skills gives skills every agent may use and a
// generic agent that offers them; a SKILL.md without a description is a
// problem, and the rest load.
func TestSkillsFolder(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"writing/release-notes/SKILL.md":    "---\nname: release-notes\ndescription: Draft release notes from a change list. Use when asked.\n---\n# Release notes\n",
		"writing/release-notes/template.md": "# {{version}}\n",
		"review/SKILL.md":                   "---\nname: review\ndescription: Review a document for gaps.\n---\n# Review\n",
		"broken/SKILL.md":                   "---\nname: broken\n---\n# no description\n",
	})
	c := Load(Options{Bundles: []string{fixtures.Bundles(t)}, Skills: dir})
	if c.SkillsDir == "" || len(c.Skills) != 2 {
		t.Fatalf("skills dir %q, skills %+v", c.SkillsDir, c.Skills)
	}
	if len(c.Problems) != 1 || !strings.Contains(c.Problems[0].Reason, "name and a description") {
		t.Fatalf("problems: %+v", c.Problems)
	}
	g, ok := c.Find(GenericAgentID)
	if !ok || len(g.Menu) != 2 || g.Menu[0].Skill != "release-notes" || g.Menu[0].Description != "Draft release notes from a change list." {
		t.Fatalf("generic agent: %+v", g)
	}
	s, ok := c.FindSkill(g, "release-notes")
	if !ok || s.Virtual != "/skills/writing/release-notes" || s.Kind != SkillStandalone {
		t.Fatalf("skill: %+v", s)
	}
	// Every agent may use the shared skills.
	lead, ok := c.Find("product-lead")
	if !ok {
		t.Fatal("product-lead missing")
	}
	if _, ok := c.FindSkill(lead, "review"); !ok {
		t.Fatal("a bundle agent cannot use the shared skills")
	}
	if files := s.Files(10); len(files) != 2 || files[0] != "SKILL.md" || files[1] != "template.md" {
		t.Fatalf("files: %q", files)
	}
}

// loadWithMenus loads the BMAD root and fails unless it has no problems and
// exactly the agents of want, each with that many menu items.
func loadWithMenus(t *testing.T, root string, want map[string]int) *Catalog {
	t.Helper()
	c := Load(Options{BMADRoots: []string{root}})
	if len(c.Problems) > 0 {
		t.Fatalf("problems: %+v", c.Problems)
	}
	if len(c.Agents) != len(want) {
		t.Fatalf("agents = %d, want %d: %v", len(c.Agents), len(want), ids(c.Agents))
	}
	for id, n := range want {
		a, ok := c.Find(id)
		if !ok {
			t.Fatalf("agent %s not found among %v", id, ids(c.Agents))
		}
		if len(a.Menu) != n {
			t.Errorf("%s: %d menu items, want %d", id, len(a.Menu), n)
		}
	}
	return c
}
