package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// agents --bmad-root on a 6.12 project lists its five agents and its
// skills; --json carries menu items with skill or prompt, and the skills
// with their kinds.
func TestAgentsSkillsProject(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612)
	r := runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents", "--bmad-root", root)
	r.wantCode(t, 0)
	for _, want := range []string{"pm ", "📋 John", "Product Manager", "analyst", "ux-designer", "29 skills:", "bmad-prd", "workflow", "bmad-build", "needs a repository and a shell"} {
		contains(t, "agents table", r.stdout, want)
	}
	if r.stderr != "" {
		t.Fatalf("stderr: %s", r.stderr)
	}
	r = runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents", "--json", "--bmad-root", root)
	r.wantCode(t, 0)
	var out struct {
		Agents []struct {
			ID, Skill, Format string
			Menu              []struct{ Code, Skill, Prompt string }
		}
		Skills []struct{ Name, Kind string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	menus := map[string]int{}
	for _, a := range out.Agents {
		if a.Format != "skill" && a.Skill == "" {
			continue // the sample bundle's agents
		}
		menus[a.ID] = len(a.Menu)
		if a.Format != "skill" || a.Skill != "bmad-agent-"+a.ID {
			t.Errorf("%s: format %s skill %s", a.ID, a.Format, a.Skill)
		}
		if a.ID == "analyst" && (a.Menu[1].Code != "MR" || !strings.Contains(a.Menu[1].Prompt, "bmad-deep-recon")) {
			t.Errorf("analyst menu[1] = %+v", a.Menu[1])
		}
	}
	if menus["analyst"] != 10 || menus["architect"] != 2 || menus["dev"] != 5 || menus["pm"] != 4 || menus["ux-designer"] != 1 {
		t.Errorf("menus = %v", menus)
	}
	if len(out.Skills) != 29 {
		t.Errorf("%d skills in --json", len(out.Skills))
	}
}

// chat --agent pm, then PRD: the greeting costs nothing and the PRD costs
// exactly one model call, whose request carries bmad-prd's SKILL.md and the
// merged persona.
func TestChatSkillsPRD(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	if err := os.WriteFile(filepath.Join(root, "_bmad/custom/bmad-agent-pm.toml"), []byte("[agent]\nicon = \"🧭\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "🧭 What problem does the product solve?"})
	vars := chatVars(t, fm)
	vars["AGENTBOT_BMAD_ROOT"] = root
	r := runCmd(t, vars, "PRD\n", "chat", "--agent", "bmad-agent-pm")
	r.wantCode(t, 0)
	contains(t, "greeting", r.stdout, "🧭 Hello Ines! I'm John, your Product Manager.")
	contains(t, "greeting", r.stdout, "1. PRD — Create, update, or validate a PRD")
	contains(t, "answer", r.stdout, "What problem does the product solve?")
	contains(t, "progress", r.stdout, "loading skill bmad-prd")
	reqs := fm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want 1", len(reqs))
	}
	raw := string(reqs[0].Raw)
	for _, want := range []string{"# BMad PRD", "You are John, Product Manager 🧭", "Translate product vision"} {
		if !strings.Contains(raw, want) {
			t.Errorf("request lacks %q", want)
		}
	}
	if strings.Contains(raw, root) || strings.Contains(raw, vars["AGENTBOT_DATA"]) {
		t.Error("request names a host path")
	}
}

// An invalid override: check fails naming the file and line, chat refuses
// to start the agent and says why, and agents --json lists the problem.
func TestSkillsInvalidOverrideEverywhere(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	if err := os.WriteFile(filepath.Join(root, "_bmad/custom/bmad-agent-pm.toml"), []byte("[agent]\n\nicon = = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, map[string]string{"AGENTBOT_BUNDLES": bundlesDir(t)}, "", "agents", "--json", "--bmad-root", root)
	r.wantCode(t, 0)
	contains(t, "agents --json", r.stdout, "bmad-agent-pm.toml:3")
	contains(t, "agents --json", r.stdout, `"problem": "_bmad/custom/bmad-agent-pm.toml:3`)

	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["AGENTBOT_BMAD_ROOT"] = root
	r = runCmd(t, vars, "hi\n", "chat", "--agent", "pm")
	r.wantCode(t, 1)
	contains(t, "chat", r.stderr, "agent pm cannot start: _bmad/custom/bmad-agent-pm.toml:3")
	if fm.Calls() != 0 {
		t.Fatal("a broken agent called the model")
	}

	s := newCheckSetup(t)
	s.vars["AGENTBOT_BMAD_ROOT"] = root
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("check exit %d:\n%s", code, out)
	}
	l := line(t, out, "✗ agents:")
	contains(t, "check", l, "29 skill(s)")
	contains(t, "check", out, "bmad-agent-pm.toml: _bmad/custom/bmad-agent-pm.toml:3")
}

// The user's bundle keeps the plain id when the shipped samples have the
// same one; the sample gets its bundle's prefix, and a problem names both.
func TestUserBundleWinsTheID(t *testing.T) {
	user := t.TempDir()
	writeFile := func(rel, content string) {
		p := filepath.Join(user, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lead, err := os.ReadFile(filepath.Join(bundlesDir(t), "product-team/agents/product-lead.md"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile("mine/bundle.yaml", "type: bundle\nname: mine\nagents:\n  - id: product-lead\n    name: Mine\n    file: agents/lead.md\n    entry_point: true\n")
	writeFile("mine/agents/lead.md", string(lead))
	t.Chdir(filepath.Dir(bundlesDir(t))) // the shipped samples are ./bundles
	r := runCmd(t, nil, "", "agents", "--json", "--bundles", "./bundles", "--bundles", user)
	r.wantCode(t, 0)
	var out struct {
		Agents   []struct{ ID, Name string }
		Problems []struct{ Path, Reason string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, a := range out.Agents {
		names[a.ID] = a.Name
	}
	if names["product-lead"] != "Mine" || names["product-team/product-lead"] != "Maren" {
		t.Fatalf("ids: %v", names)
	}
	if len(out.Problems) != 1 || !strings.Contains(out.Problems[0].Reason, `id "product-lead" is taken by `+filepath.Join(user, "mine/agents/lead.md")) {
		t.Fatalf("problems: %+v", out.Problems)
	}
}
