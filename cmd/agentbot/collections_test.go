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

// A BMAD-only user, in the project folder with no bundles folder and only
// the BMAD root set, gets a passing agents check with all 12 agents of the
// modules install, and no sample bundle.
func TestCheckBMADOnly(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612M)
	t.Chdir(t.TempDir()) // no ./bundles here
	s := newCheckSetup(t)
	delete(s.vars, "AGENTBOT_BUNDLES")
	s.vars["AGENTBOT_BMAD_ROOT"] = root
	_, out := s.check(t)
	l := line(t, out, "✓ agents:")
	contains(t, "check", l, "12 agent(s) in --bmad-root")
	contains(t, "check", l, "storyteller")
	lacks(t, "check", out, "bundle folder not found")
	lacks(t, "check", l, "product-lead")
}

// With no source named and no ./bundles folder, the sample bundle built
// into the binary is offered; a bundles folder named but missing is a
// problem, never silently skipped.
func TestBuiltinSampleBundle(t *testing.T) {
	t.Chdir(t.TempDir())
	data := filepath.Join(t.TempDir(), "data")
	r := runCmd(t, map[string]string{"AGENTBOT_DATA": data}, "", "agents")
	r.wantCode(t, 0)
	contains(t, "agents", r.stdout, "🧭 Maren")
	contains(t, "agents", r.stdout, filepath.Join(data, "samples"))
	if r.stderr != "" {
		t.Fatalf("stderr: %s", r.stderr)
	}
	r = runCmd(t, map[string]string{"AGENTBOT_DATA": data}, "", "agents", "--bundles", "./mine")
	r.wantCode(t, 1)
	contains(t, "agents", r.stderr, "mine: bundle folder not found")
}

// agents --json shows the modules install's agents and per-skill honesty:
// a skill with scripts, and the MCP servers a skill requires.
func TestAgentsJSONModules(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612M)
	r := runCmd(t, map[string]string{"AGENTBOT_DATA": t.TempDir()}, "", "agents", "--json", "--bmad-root", root)
	r.wantCode(t, 0)
	var out struct {
		Agents []struct{ ID, Skill string }
		Skills []struct {
			Name, Kind string
			Scripts    bool
		}
		Problems []any
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Agents) != 12 || len(out.Skills) != 51 || len(out.Problems) != 0 {
		t.Fatalf("%d agents, %d skills, problems %v", len(out.Agents), len(out.Skills), out.Problems)
	}
	for _, s := range out.Skills {
		if s.Name == "bmad-workflow-builder" && (!s.Scripts || s.Kind != "standalone") {
			t.Fatalf("bmad-workflow-builder: %+v", s)
		}
	}
}

// chat with a collection of 1,000 skills: the greeting shows the first
// items and a count, and the first request stays under 40 KB with
// find_skills offered.
func TestChatLargeCollection(t *testing.T) {
	dir := fixtures.SkillCollection(t, 1000)
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "Which topic?"})
	vars := chatVars(t, fm)
	vars["AGENTBOT_SKILLS"] = dir
	r := runCmd(t, vars, "I need help with pricing\n", "chat", "--agent", "agentbot")
	r.wantCode(t, 0)
	contains(t, "greeting", r.stdout, "…and 980 more.")
	greeting, _, _ := strings.Cut(r.stdout, "Which topic?")
	if len(greeting) > 12000/2 {
		t.Fatalf("greeting and chrome: %d bytes", len(greeting))
	}
	reqs := fm.Requests()
	if len(reqs) != 1 || len(reqs[0].Raw) > 40<<10 {
		t.Fatalf("%d requests; first %d bytes", len(reqs), len(reqs[0].Raw))
	}
	contains(t, "first request", string(reqs[0].Raw), `"name":"find_skills"`)
	if strings.Contains(string(reqs[0].Raw), dir) {
		t.Fatal("the request names the host path")
	}
}

// agents --json says, agent by agent, whether the MCP server a skill
// requires is configured for that agent, and the table marks skills with
// scripts.
func TestAgentsJSONSkillMCP(t *testing.T) {
	skills := t.TempDir()
	for rel, content := range map[string]string{
		"triage/SKILL.md":         "---\nname: triage\ndescription: Triage issues.\nrequires:\n  mcp: [github]\n---\n# Triage\n",
		"lint/SKILL.md":           "---\nname: lint\ndescription: Lint a document.\n---\n# Lint\n",
		"lint/scripts/check.py":   "print('ok')\n",
		"broken/SKILL.md":         "---\nname: broken\ndescription: [unclosed\n---\n",
		".system/hidden/SKILL.md": "---\nname: hidden\ndescription: In a dot-folder.\n---\n",
	} {
		writeTestFile(t, filepath.Join(skills, rel), content)
	}
	bundle := writeCheckBundle(t, "type: standalone\nname: tester\nmcp: [github]\nagent:\n  id: tester\n  name: Tess\n  file: agent.md\n")
	vars := map[string]string{"AGENTBOT_DATA": t.TempDir(), "AGENTBOT_BUNDLES": bundle, "AGENTBOT_SKILLS": skills}
	r := runCmd(t, vars, "", "agents", "--json")
	var out struct {
		Agents []struct {
			ID       string
			SkillMCP []struct {
				Skill, Server, Note string
				Configured          bool
			} `json:"skill_mcp"`
		}
		Problems []struct{ Path, Reason string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, a := range out.Agents {
		if len(a.SkillMCP) != 1 || a.SkillMCP[0].Skill != "triage" || a.SkillMCP[0].Server != "github" {
			t.Fatalf("%s: %+v", a.ID, a.SkillMCP)
		}
		got[a.ID] = a.SkillMCP[0].Configured
	}
	if !got["tester"] || got["agentbot"] {
		t.Fatalf("configured: %v", got)
	}
	if len(out.Problems) != 1 || !strings.Contains(out.Problems[0].Reason, "frontmatter is invalid YAML: line 2: did not find expected") {
		t.Fatalf("problems: %+v", out.Problems)
	}
	r = runCmd(t, vars, "", "agents")
	contains(t, "agents table", r.stdout, "lint")
	contains(t, "agents table", r.stdout, "its scripts cannot run here")
	contains(t, "agents table", r.stdout, "hidden")
}

// writeTestFile writes a file and the folders above it.
func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
