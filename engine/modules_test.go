package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// noUnresolved fails when a request still holds a placeholder the runtime
// resolves: a config key of the agent's project, {project-root},
// {skill-root}, {skill-name}, {date}, {agent.*} or {workflow.*}, in any
// message.
func noUnresolved(t *testing.T, req fakemodel.Request, a *catalog.Agent) {
	t.Helper()
	// The messages, not the tool definitions, whose descriptions show
	// placeholders as examples.
	msgs, _ := json.Marshal(req.Messages)
	raw := string(msgs)
	names := []string{"{project-root}", "{skill-root}", "{skill-name}", "{date}", "{agent.", "{workflow."}
	for k := range a.Home.Config {
		names = append(names, "{"+k+"}")
	}
	for _, n := range names {
		for off := 0; ; {
			i := strings.Index(raw[off:], n)
			if i < 0 {
				break
			}
			i += off
			off = i + len(n)
			// A field name must follow a prefix ("{workflow.<name>}" is
			// documentation); the prompt's list of variables names them:
			// "{x} = value".
			if strings.HasSuffix(n, ".") && (off >= len(raw) || !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz_", rune(raw[off]))) {
				continue
			}
			if j := strings.IndexByte(raw[i:], '}'); j > 0 && strings.HasPrefix(raw[i+j+1:], " = ") {
				continue
			}
			t.Errorf("request %d holds %s unresolved: …%s…", req.N, n, raw[max(0, i-120):min(len(raw), i+80)])
			break
		}
	}
}

// Each kind of start in the 6.12 install with bmm, bmb, cis and tea costs
// exactly one model call, and that request holds no placeholder the
// runtime resolves and no host path: a cis agent's launcher skill (its
// linked workflow.md preloaded and resolved), TEA's step-file workflow and
// a bmb skill asked for by name (marked for its scripts).
func TestModulesStartOneCall(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612M)
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	cases := []struct {
		agent, input, skill, wantFile, wantText string
	}{
		{"storyteller", "ST", "bmad-cis-storytelling", "/project/.claude/skills/bmad-cis-storytelling/workflow.md", "/outputs/story-2026-11-21.md"},
		{"bmad-tea", "TD", "bmad-testarch-test-design", "", "Test Design and Risk Assessment"},
		{"analyst", "bmad-workflow-builder", "bmad-workflow-builder", "", "Workflow"},
	}
	for _, c := range cases {
		t.Run(c.skill, func(t *testing.T) {
			before := h.fm.Calls()
			s, g := h.start("k-"+c.skill, c.agent)
			if strings.Contains(g.Text, "{") {
				t.Errorf("greeting holds a placeholder: %q", g.Text)
			}
			h.fm.Enqueue(fakemodel.Reply{Text: "Let's begin: what is it about?"})
			res := h.turn(s, c.input)
			if h.fm.Calls()-before != 1 || res.Tools != 1 {
				t.Fatalf("%s took %d model calls, %d tools", c.input, h.fm.Calls()-before, res.Tools)
			}
			reqs := h.fm.Requests()
			req := reqs[len(reqs)-1]
			r := toolResults(t, req)[0]
			if r["skill"] != c.skill {
				t.Fatalf("loaded %v, want %s (%v)", r["skill"], c.skill, r["error"])
			}
			var all strings.Builder
			all.WriteString(r["skill_md"].(string))
			files, _ := r["activation_files"].([]any)
			for _, f := range files {
				m := f.(map[string]any)
				all.WriteString(m["content"].(string))
			}
			if c.wantFile != "" {
				if len(files) == 0 || files[0].(map[string]any)["path"] != c.wantFile {
					t.Fatalf("launcher file not preloaded: %v", files)
				}
			}
			contains(t, all.String(), c.wantText, "skill content")
			noUnresolved(t, req, h.agent(c.agent))
			noHostPaths(t, h, root)
		})
	}
	// The bmb skill ships scripts: the model is told they cannot run.
	reqs := h.fm.Requests()
	if r := toolResults(t, reqs[len(reqs)-1])[0]; r["scripts"] != catalog.ScriptsNote {
		t.Fatalf("scripts note: %v", r["scripts"])
	}
}

// A skill that requires an MCP server says, when it loads, whether this
// agent has that server and which one.
func TestSkillRequiresMCP(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "triage/SKILL.md", "---\nname: triage\ndescription: Triage issues.\nrequires:\n  mcp: [github]\n---\n# Triage\n")
	write(t, dir, "search/SKILL.md", "---\nname: search\ndescription: Search the wiki.\nrequires:\n  mcp:\n    - confluence\n---\n# Search\n")
	tool := engine.ExternalTool{Name: "github__list_issues", Server: "github", Schema: json.RawMessage(`{"type":"object"}`),
		Call: func(context.Context, json.RawMessage, engine.ExternalCall) (engine.ExternalReply, error) {
			return engine.ExternalReply{Text: "[]"}, nil
		}}
	h := newHarness(t, harnessOpts{skills: dir, mutate: func(c *engine.Config) {
		c.ExternalTools = func(context.Context, *engine.Session, func(string)) []engine.ExternalTool {
			return []engine.ExternalTool{tool}
		}
	}})
	s, _ := h.start("k", "agentbot")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "triage"}), call("load_skill", map[string]string{"name": "search"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(s, "triage and search")
	reqs := h.fm.Requests()
	res := toolResults(t, reqs[len(reqs)-1])
	need := func(r map[string]any) map[string]any {
		l, _ := r["requires_mcp"].([]any)
		if len(l) != 1 {
			t.Fatalf("requires_mcp: %v", r)
		}
		return l[0].(map[string]any)
	}
	if n := need(res[0]); n["server"] != "github" || n["configured"] != true || !strings.Contains(n["note"].(string), "is configured for this agent") {
		t.Fatalf("github: %v", n)
	}
	if n := need(res[1]); n["server"] != "confluence" || n["configured"] != false || !strings.Contains(n["note"].(string), "not configured for this agent (it has github)") {
		t.Fatalf("confluence: %v", n)
	}
}

// The files bmad-prd's activation names (references/headless.md) go out
// resolved like its SKILL.md.
func TestSkillPreloadedFilesResolved(t *testing.T) {
	root := fixtures.Dir(t, fixtures.V612)
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "What problem does it solve?"})
	h.turn(s, "PRD")
	req := h.fm.Requests()[0]
	r := toolResults(t, req)[0]
	files, _ := r["activation_files"].([]any)
	found := false
	for _, f := range files {
		m := f.(map[string]any)
		if strings.HasSuffix(m["path"].(string), "references/headless.md") {
			found = true
			contains(t, m["content"].(string), "/project/", "headless.md with {project-root} resolved")
		}
	}
	if !found {
		t.Fatalf("headless.md not preloaded: %v", files)
	}
	noUnresolved(t, req, h.agent("pm"))
	noHostPaths(t, h, root)
}

// A 6.3-style install (real 6.3 shapes: a Capabilities table naming skills
// without backticks, an agent-manifest.csv whose path is stale, a launcher
// skill): picking CP loads the launcher and its workflow.md, resolved, in
// one model call.
func TestSkill63LauncherOneCall(t *testing.T) {
	root := t.TempDir()
	write(t, root, "_bmad/_config/manifest.yaml", "installation:\n  version: 6.3.0\nides:\n  - cursor\n")
	write(t, root, "_bmad/_config/agent-manifest.csv", "name,displayName,title,icon,role,identity,communicationStyle,principles,module,path,canonicalId\n"+
		`"pm","John","Product Manager","📋","PM","Veteran PM.","Asks WHY.","Ship small.","bmm","_bmad/bmm/agents/bmad-agent-pm/SKILL.md","bmad-agent-pm"`+"\n")
	write(t, root, "_bmad/bmm/config.yaml", "user_name: Ana\noutput_folder: \"{project-root}/_bmad-output\"\nplanning_artifacts: \"{project-root}/_bmad-output/planning\"\n")
	write(t, root, ".cursor/skills/bmad-agent-pm/SKILL.md", "---\nname: bmad-agent-pm\ndescription: Product manager.\n---\n\n# John\n\n"+
		"## Capabilities\n\n| Code | Description | Skill |\n|------|-------------|-------|\n| CP | Create a PRD | bmad-create-prd |\n")
	write(t, root, ".cursor/skills/bmad-create-prd/SKILL.md", "---\nname: bmad-create-prd\ndescription: Create a PRD.\n---\n\nFollow the instructions in [workflow.md](workflow.md).\n")
	write(t, root, ".cursor/skills/bmad-create-prd/workflow.md", "# Create PRD\n\nWrite `{planning_artifacts}/prd-{date}.md` for {user_name}; the template is `{skill-root}/template.md`.\n")
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	if len(h.cat.Problems) != 0 {
		t.Fatalf("problems: %+v", h.cat.Problems)
	}
	s, g := h.start("k", "pm")
	contains(t, g.Text, "1. CP — Create a PRD", "menu from the table without backticks")
	h.fm.Enqueue(fakemodel.Reply{Text: "What is the product?"})
	res := h.turn(s, "CP")
	if h.fm.Calls() != 1 || res.Tools != 1 {
		t.Fatalf("CP took %d calls, %d tools", h.fm.Calls(), res.Tools)
	}
	req := h.fm.Requests()[0]
	files, _ := toolResults(t, req)[0]["activation_files"].([]any)
	if len(files) != 1 {
		t.Fatalf("activation files: %v", files)
	}
	f := files[0].(map[string]any)
	if f["path"] != "/project/.cursor/skills/bmad-create-prd/workflow.md" ||
		!strings.Contains(f["content"].(string), "Write `/outputs/planning/prd-2026-11-21.md` for Ana; the template is `/project/.cursor/skills/bmad-create-prd/template.md`.") {
		t.Fatalf("workflow.md: %v", f)
	}
	noUnresolved(t, req, h.agent("pm"))
	noHostPaths(t, h, root)
}
