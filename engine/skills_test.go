package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/transcript"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// skillHarness is a harness over a writable copy of the 6.12 project.
func skillHarness(t *testing.T, edit func(root string)) (*harness, string) {
	t.Helper()
	root := fixtures.Copy(t, fixtures.V612)
	if edit != nil {
		edit(root)
	}
	return newHarness(t, harnessOpts{bmad: []string{root}}), root
}

// noHostPaths fails when any request names a host path: the project copy,
// the data folder or the temp folder.
func noHostPaths(t *testing.T, h *harness, roots ...string) {
	t.Helper()
	for _, req := range h.fm.Requests() {
		raw := string(req.Raw)
		for _, r := range append(roots, h.dir, os.TempDir()+"/") {
			if r != "" && strings.Contains(raw, r) {
				t.Fatalf("request %d names the host path %s", req.N, r)
			}
		}
	}
}

// systemPrompt returns a session's system prompt.
func systemPrompt(s *engine.Session) string { return s.Messages[0].Content }

// Picking an agent makes no model call: the greeting has the icon first,
// the user's name and bmad-help, the menu shows codes and descriptions, and
// the persona, facts and runtime limits are in the system prompt.
func TestSkillAgentZeroCallActivation(t *testing.T) {
	h, root := skillHarness(t, nil)
	s, g := h.start("k1", "pm")
	if h.fm.Calls() != 0 {
		t.Fatalf("activation made %d model calls", h.fm.Calls())
	}
	if !strings.HasPrefix(g.Text, "📋 Hello Ines! I'm John, your Product Manager.") || !strings.Contains(g.Text, "`bmad-help`") {
		t.Fatalf("greeting: %q", g.Text)
	}
	contains(t, g.Text, "1. PRD — Create, update, or validate a PRD", "menu item 1")
	contains(t, g.Text, "4. CC — Determine how to proceed", "menu item 4")
	if len(g.Menu) != 4 {
		t.Fatalf("menu has %d items", len(g.Menu))
	}
	sp := systemPrompt(s)
	for _, want := range []string{
		"You are John, Product Manager 📋.",
		"Translate product vision into a validated PRD", // {agent.role}, resolved
		"Ship the smallest thing that validates the assumption.",
		"## This runtime", "no shell, uv, python, git, web search or subagents",
		"memlog tool",
		"- bmad-prd: Create, update, or validate a PRD.",
		"- bmad-build: ", "(needs a repository and a shell: not here; ask for pasted material)",
		"- {planning_artifacts} = /outputs/planning-artifacts",
		"- {project-root} = /project",
		"- {skill-root} = /project/.claude/skills/bmad-agent-pm",
		"- {user_name} = Ines",
	} {
		contains(t, sp, want, "system prompt")
	}
	for _, not := range []string{"{agent.role}", "{agent.icon}", root} {
		if strings.Contains(sp, not) {
			t.Errorf("system prompt still holds %q", not)
		}
	}
	// The prompt is byte-stable: a second session on another day is the same.
	s2, _ := h.start("k2", "pm")
	if systemPrompt(s2) != sp {
		t.Error("two sessions of one agent have different system prompts")
	}
}

// "PRD" costs exactly one model call, and that request carries bmad-prd's
// SKILL.md resolved, its customization and config, and the merged persona,
// and no host path.
func TestSkillMenuPRDOneCall(t *testing.T) {
	h, root := skillHarness(t, func(root string) {
		write(t, root, "_bmad/custom/bmad-agent-pm.toml", "[agent]\nprinciples = [\"Our PRDs fit on two pages.\"]\n")
	})
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "Hi Ines! Tell me about the product: what problem does it solve?"})
	res := h.turn(s, "PRD")
	if h.fm.Calls() != 1 || res.Iterations != 1 || res.Tools != 1 {
		t.Fatalf("PRD took %d model calls, %d iterations, %d tools", h.fm.Calls(), res.Iterations, res.Tools)
	}
	req := h.fm.Requests()[0]
	contains(t, req.Messages[0].Content, "Our PRDs fit on two pages.", "merged persona in the request")
	results := toolResults(t, req)
	if len(results) != 1 {
		t.Fatalf("%d tool results in the first request", len(results))
	}
	r := results[0]
	if r["skill"] != "bmad-prd" || r["kind"] != "workflow" || r["skill_root"] != "/project/.claude/skills/bmad-prd" {
		t.Fatalf("load_skill result head: %v %v %v", r["skill"], r["kind"], r["skill_root"])
	}
	md, _ := r["skill_md"].(string)
	contains(t, md, "# BMad PRD", "SKILL.md")
	contains(t, md, "uv run /project/_bmad/scripts/memlog.py append --workspace {doc_workspace}", "placeholders resolved, run-time names kept")
	if strings.Contains(md, "{project-root}") || strings.Contains(md, "{skill-root}") {
		t.Error("SKILL.md still holds {project-root} or {skill-root}")
	}
	custom, _ := json.Marshal(r["customization"])
	contains(t, string(custom), `"prd_output_path":"/outputs/planning-artifacts/prds"`, "resolved [workflow]")
	contains(t, string(custom), `"run_folder_pattern":"prd-bmadnew-2026-11-21"`, "resolved [workflow] with {date}")
	cfg, _ := r["config"].(map[string]any)
	if cfg["user_name"] != "Ines" || cfg["planning_artifacts"] != "/outputs/planning-artifacts" || cfg["date"] != "2026-11-21" {
		t.Fatalf("config: %v", cfg)
	}
	files, _ := r["files"].([]any)
	if len(files) != 8 {
		t.Errorf("file list: %v", files)
	}
	bound, _ := r["bound_by_you"].([]any)
	if len(bound) == 0 || bound[0] != "doc_workspace" {
		t.Errorf("bound_by_you: %v", bound)
	}
	contains(t, req.Messages[len(req.Messages)-1].Content, "The runtime loaded the skill bmad-prd above", "pick note")
	noHostPaths(t, h, root)
	if s.Skill == nil || s.Skill.Name != "bmad-prd" {
		t.Fatalf("active skill = %+v", s.Skill)
	}
}

// A first message that names a menu item inside a sentence is dispatched at
// once; a later sentence that mentions a code is an ordinary message.
func TestSkillFirstMessageDispatch(t *testing.T) {
	h, _ := skillHarness(t, nil)
	for _, c := range []struct{ input, skill string }{
		{"hey John, let's write the PRD", "bmad-prd"},
		{"2", "bmad-create-epics-and-stories"},
		{"bmad-correct-course", "bmad-correct-course"},
		{"I need the epics and stories listing that will drive development", "bmad-create-epics-and-stories"},
	} {
		s, _ := h.start("k-"+c.input, "pm")
		h.fm.Enqueue(fakemodel.Reply{Text: "ok"})
		res := h.turn(s, c.input)
		if res.Tools != 1 || s.Skill == nil || s.Skill.Name != c.skill {
			t.Errorf("%q: tools %d, active skill %+v; want %s", c.input, res.Tools, s.Skill, c.skill)
		}
	}
	s, _ := h.start("k-later", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "hello"}, fakemodel.Reply{Text: "sure"})
	h.turn(s, "hi there")
	res := h.turn(s, "what goes into a good PRD anyway?")
	if res.Tools != 0 {
		t.Fatalf("a later question was dispatched: %d tools", res.Tools)
	}
}

// A prompt item runs its text as the instruction, and the skill it names
// is preloaded, so it too costs one model call.
func TestSkillPromptItem(t *testing.T) {
	h, _ := skillHarness(t, nil)
	s, _ := h.start("k", "analyst")
	h.fm.Enqueue(fakemodel.Reply{Text: "Which market?"})
	res := h.turn(s, "MR")
	if h.fm.Calls() != 1 || res.Tools != 1 {
		t.Fatalf("MR took %d calls, %d tools", h.fm.Calls(), res.Tools)
	}
	req := h.fm.Requests()[0]
	if r := toolResults(t, req)[0]; r["skill"] != "bmad-deep-recon" {
		t.Fatalf("preloaded %v", r["skill"])
	}
	contains(t, req.LastUserText(), "with the market research type pre-selected", "the prompt as the instruction")
}

// memlog keeps memlog.py's exact format: init, then append, then set.
func TestSkillMemlogRoundTrip(t *testing.T) {
	ctx := context.Background()
	h, _ := skillHarness(t, nil)
	s, _ := h.start("k", "pm")
	ws := "{planning_artifacts}/prds/prd-bmadnew-2026-11-21"
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]any{"command": "init", "workspace": ws, "fields": []string{"topic=One-click reorder"}})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]any{"command": "append", "workspace": ws, "type": "decision", "text": "B2B buyers first:\n  they  reorder weekly"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]any{"command": "append", "workspace": ws, "by": "user", "text": "keep it small"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]any{"command": "set", "workspace": ws, "key": "goal", "value": "lift reorders"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]any{"command": "init", "workspace": ws})}},
		fakemodel.Reply{Text: "Logged."},
	)
	h.turn(s, "start the log")
	dir, _ := h.st.OutputDir(s.ID)
	got, err := os.ReadFile(filepath.Join(dir, "planning-artifacts/prds/prd-bmadnew-2026-11-21/.memlog.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "---\ntopic: One-click reorder\ngoal: lift reorders\nupdated: 2026-11-21T09:30\n---\n\n" +
		"- (decision) B2B buyers first: they reorder weekly\n- (by user) keep it small\n"
	if string(got) != want {
		t.Fatalf("memlog file:\n%s\nwant:\n%s", got, want)
	}
	results := toolResults(t, h.fm.Requests()[5])
	if results[1]["entries"] != float64(1) || results[3]["entries"] != float64(2) || results[0]["memlog"] != "/outputs/planning-artifacts/prds/prd-bmadnew-2026-11-21/.memlog.md" {
		t.Fatalf("acks: %v", results)
	}
	if e, _ := results[4]["error"].(string); !strings.Contains(e, "already exists") {
		t.Fatalf("a second init: %v", results[4])
	}

	// The log is kept in the store as an internal file, not a document:
	// another replica (here: the same engine with its local folder gone)
	// goes on with it.
	logPath := "planning-artifacts/prds/prd-bmadnew-2026-11-21/.memlog.md"
	if docs := transcript.Documents(s.Outputs); len(docs) != 0 {
		t.Fatalf("the memlog is listed as a document: %+v", docs)
	}
	if stored, err := h.st.OutputData(ctx, s.ID, logPath, 0); err != nil || string(stored) != want {
		t.Fatalf("stored memlog %q, %v; want the final bytes", stored, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", map[string]any{"command": "append", "workspace": ws, "text": "after the move"})}},
		fakemodel.Reply{Text: "Logged again."},
	)
	h.turn(s, "go on")
	reqs := h.fm.Requests()
	again := toolResults(t, reqs[len(reqs)-1])
	if last := again[len(again)-1]; last["entries"] != float64(3) {
		t.Fatalf("append after the local folder went away: %v", last)
	}
	if stored, _ := h.st.OutputData(ctx, s.ID, logPath, 0); !strings.HasSuffix(string(stored), "- after the move\n") {
		t.Fatalf("the store lacks the new entry:\n%s", stored)
	}
}

// A step-file workflow builds a document a section at a time: appends and
// one-passage replacements never resend the whole document, and the
// document is one version per turn.
func TestSkillStepFileWrites(t *testing.T) {
	h, _ := skillHarness(t, nil)
	s, _ := h.start("k", "pm")
	doc := "{planning_artifacts}/prd.md"
	goals := "\n## Goals\n- Reorder in one click.\n"
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": doc, "content": "---\nstatus: draft\n---\n# PRD\n"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": doc, "append": goals})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": doc, "old_text": "status: draft", "new_text": "status: final"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": doc, "old_text": "nowhere", "new_text": "x"})}},
		fakemodel.Reply{Text: "Done."},
	)
	h.turn(s, "write it")
	dir, _ := h.st.OutputDir(s.ID)
	got, _ := os.ReadFile(filepath.Join(dir, "planning-artifacts/prd.md"))
	if string(got) != "---\nstatus: final\n---\n# PRD\n"+goals {
		t.Fatalf("document = %q", got)
	}
	reqs := h.fm.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == "edit_output" && strings.Contains(tc.Function.Arguments, "# PRD") {
				t.Fatalf("an edit resent the document: %s", tc.Function.Arguments)
			}
		}
	}
	res := toolResults(t, reqs[len(reqs)-1])
	if e, _ := res[3]["error"].(string); !strings.Contains(e, "does not occur") {
		t.Fatalf("a missing passage: %v", res[3])
	}
	if len(s.Outputs) != 1 || s.Outputs[0].Version != 1 || s.Outputs[0].Path != "planning-artifacts/prd.md" || s.Outputs[0].Size != int64(len(got)) {
		t.Fatalf("outputs = %+v", s.Outputs)
	}
	if n := len(h.eventsOf(engine.EventOutput)); n != 3 {
		t.Fatalf("%d output events, want 3", n)
	}
}

// load_skill works mid-session; the loaded skill's bare paths then resolve
// in its folder, and list_files finds earlier runs.
func TestSkillLoadMidSession(t *testing.T) {
	h, root := skillHarness(t, nil)
	s, _ := h.start("k", "pm")
	h.fm.Enqueue(fakemodel.Reply{Text: "What now?"})
	h.turn(s, "hello")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "bmad-help"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "bmad-prd"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			call("read_file", map[string]string{"path": "references/validate.md"}),
			call("save_output", map[string]string{"path": "{planning_artifacts}/prds/prd-a/prd.md", "content": "---\nstatus: draft\n---\n"}),
		}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("list_files", map[string]string{"glob": "{planning_artifacts}/prds/*/prd.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "bmad-nonexistent"})}},
		fakemodel.Reply{Text: "Here is what to do next."},
	)
	h.turn(s, "what should I do next?")
	reqs := h.fm.Requests()
	res := toolResults(t, reqs[len(reqs)-1])
	if res[0]["skill"] != "bmad-help" || res[0]["kind"] != "standalone" || !strings.Contains(res[0]["skill_md"].(string), "# BMad Help") {
		t.Fatalf("bmad-help: %v %v", res[0]["skill"], res[0]["kind"])
	}
	if res[2]["path"] != "/project/.claude/skills/bmad-prd/references/validate.md" {
		t.Fatalf("bare path read: %v", res[2])
	}
	files, _ := res[4]["files"].([]any)
	if len(files) != 1 || files[0] != "/outputs/planning-artifacts/prds/prd-a/prd.md" {
		t.Fatalf("list_files: %v", res[4])
	}
	if e, _ := res[5]["error"].(string); !strings.Contains(e, `no skill "bmad-nonexistent"`) || !strings.Contains(e, "bmad-prd") {
		t.Fatalf("unknown skill: %v", res[5])
	}
	// The active skill survives into the next turn.
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "assets/prd-template.md"})}}, fakemodel.Reply{Text: "ok"})
	h.turn(s, "show me the template")
	reqs = h.fm.Requests()
	last := toolResults(t, reqs[len(reqs)-1])
	if p := last[len(last)-1]["path"]; p != "/project/.claude/skills/bmad-prd/assets/prd-template.md" {
		t.Fatalf("next turn's bare path: %v", p)
	}
	noHostPaths(t, h, root)
}

// An invalid override stops the agent with its file and line, never the
// defaults, and no host path.
func TestSkillInvalidOverrideCannotStart(t *testing.T) {
	ctx := context.Background()
	h, root := skillHarness(t, func(root string) {
		write(t, root, "_bmad/custom/bmad-agent-pm.toml", "[agent]\nicon = \"🚀\"\nicon = \"again\"\n")
	})
	s, err := live(h.st.NewSession(ctx, "k"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.eng.Activate(context.Background(), s, h.agent("pm"))
	if err == nil || !strings.Contains(err.Error(), "cannot start") || !strings.Contains(err.Error(), "_bmad/custom/bmad-agent-pm.toml:3") || strings.Contains(err.Error(), root) {
		t.Fatalf("activate: %v", err)
	}
}

// Activation steps an override adds are handed to the first model call.
func TestSkillActivationStepsHandedOn(t *testing.T) {
	h, _ := skillHarness(t, func(root string) {
		write(t, root, "_bmad/custom/bmad-agent-pm.toml", "[agent]\nactivation_steps_prepend = [\"Read {project-root}/docs/rules.md.\"]\nactivation_steps_append = [\"Ask which quarter this is for.\"]\n")
	})
	s, _ := h.start("k", "pm")
	facts := s.Messages[1].Content
	contains(t, facts, "1. Read /project/docs/rules.md.", "prepend step")
	contains(t, facts, "After the greeting (activation_steps_append):\n1. Ask which quarter this is for.", "append step")
	h.fm.Enqueue(fakemodel.Reply{Text: "ok"})
	h.turn(s, "hi")
	contains(t, h.fm.Requests()[0].Messages[1].Content, "activation_steps_prepend", "first request")
}

// A plain folder of Agent Skills: the generic agent offers them, and a
// menu pick loads one from /skills in one call.
func TestSharedSkillsFolder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "release-notes/SKILL.md", "---\nname: release-notes\ndescription: Draft release notes.\n---\n# Release notes\nUse `template.md` in {skill-root}.\n")
	write(t, dir, "release-notes/template.md", "# {{version}}\n")
	h := newHarness(t, harnessOpts{skills: dir})
	s, g := h.start("k", "agentbot")
	contains(t, g.Text, "1. release-notes — Draft release notes.", "generic menu")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "template.md"})}}, fakemodel.Reply{Text: "Which version?"})
	h.turn(s, "1")
	reqs := h.fm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	res := toolResults(t, reqs[1])
	if res[0]["skill_root"] != "/skills/release-notes" || !strings.Contains(res[0]["skill_md"].(string), "Use `template.md` in /skills/release-notes.") {
		t.Fatalf("load: %v", res[0])
	}
	if res[1]["path"] != "/skills/release-notes/template.md" {
		t.Fatalf("read in the skill: %v", res[1])
	}
	noHostPaths(t, h, dir)
	// A bundle agent may load the shared skills too.
	s2, _ := h.start("k2", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "release-notes"})}}, fakemodel.Reply{Text: "ok"})
	h.turn(s2, "notes please")
	reqs = h.fm.Requests()
	if r := toolResults(t, reqs[len(reqs)-1]); len(r) == 0 || r[len(r)-1]["skill"] != "release-notes" {
		t.Fatalf("bundle agent load_skill: %v", r)
	}
	_ = transcript.RoleTool
}

// write creates a file under root.
func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
