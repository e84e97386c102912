package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage"
)

// Output paths of installs up to 6.10 (here 6.2, whose config has
// planning_artifacts: "{project-root}/{output_folder}/planning-artifacts"
// and no output_folder): the agent is told the project's documents, a save
// through each form the installers write lands there, and the literal
// "{output_folder}" folder the installer created shows among the
// documents as a base layer a save puts a version on.
func TestOlderReleaseOutputFolders(t *testing.T) {
	ctx := context.Background()
	root := fixtures.Copy(t, fixtures.V62)
	write(t, root, "{output_folder}/planning-artifacts/old-brief.md", "BRIEF from the literal folder")
	h := projectHarnessAt(t, root, nil)
	s := h.startAs("T1/C1/1.1", "pm", "U1")
	if got := s.Vars["planning_artifacts"]; got != "/outputs/planning-artifacts" {
		t.Fatalf("planning_artifacts = %q", got)
	}
	contains(t, systemPrompt(s), "/outputs/implementation-artifacts", "the system prompt's variables")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			call("read_file", map[string]string{"path": "{planning_artifacts}/old-brief.md"}),
			call("save_output", map[string]string{"path": "{project-root}/{output_folder}/planning-artifacts/prd.md", "content": "# PRD\n"}),
			call("save_output", map[string]string{"path": "{implementation_artifacts}/sprint-status.yaml", "content": "sprint: 1\n"}),
			call("save_output", map[string]string{"path": "/project/{output_folder}/notes.md", "content": "notes\n"}),
		}},
		fakemodel.Reply{Text: "Saved."},
	)
	h.turn(s, "go")
	reqs := h.fm.Requests()
	res := toolResults(t, reqs[len(reqs)-1])
	contains(t, fmt.Sprint(res[0]["content"]), "BRIEF from the literal folder", "the literal {output_folder} folder")
	for i, want := range []string{"planning-artifacts/prd.md", "implementation-artifacts/sprint-status.yaml", "notes.md"} {
		if r := res[i+1]; r["error"] != nil {
			t.Fatalf("save %s: %v", want, r["error"])
		}
		hist, err := h.st.DocumentHistory(ctx, storage.ChannelProject("T1", "C1"), want)
		if err != nil || len(hist) != 1 || hist[0].Version != 1 {
			t.Errorf("document %s: %+v, %v", want, hist, err)
		}
	}
	// Nothing was written into the project itself.
	if _, err := os.Stat(filepath.Join(root, "{output_folder}", "planning-artifacts", "prd.md")); err == nil {
		t.Error("a save wrote into the BMAD project")
	}
}

// A 6.3 menu item that names bmad-product-brief-preview, when the install
// has bmad-product-brief: the pick loads the installed skill in one call,
// and the result says which name it stands in for.
func TestPreviewSkillNameLoadsInstalledSkill(t *testing.T) {
	root := t.TempDir()
	write(t, root, "_bmad/_config/manifest.yaml", "installation:\n  version: 6.3.0\nides:\n  - claude-code\n")
	write(t, root, ".claude/skills/bmad-agent-analyst/bmad-skill-manifest.yaml", "type: agent\ndisplayName: Mary\ntitle: Business Analyst\n")
	write(t, root, ".claude/skills/bmad-agent-analyst/SKILL.md", "---\nname: bmad-agent-analyst\ndescription: Analyst.\n---\n\n# Mary\n\n## Capabilities\n\n"+
		"| Code | Description | Skill |\n|------|-------------|-------|\n| CB | Create or update product briefs | bmad-product-brief-preview |\n")
	write(t, root, ".claude/skills/bmad-product-brief/SKILL.md", "---\nname: bmad-product-brief\ndescription: Product brief.\n---\n\n# Product Brief\n\nAsk what the product is for, then draft the brief.\n")
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	if len(h.cat.Problems) != 0 {
		t.Fatalf("problems: %+v", h.cat.Problems)
	}
	s, _ := h.start("k", "analyst")
	h.fm.Enqueue(fakemodel.Reply{Text: "What is the product?"})
	if res := h.turn(s, "CB"); h.fm.Calls() != 1 || res.Tools != 1 {
		t.Fatalf("CB took %d calls, %d tools", h.fm.Calls(), res.Tools)
	}
	r := toolResults(t, h.fm.Requests()[0])[0]
	if r["skill"] != "bmad-product-brief" || r["loaded_for"] != "bmad-product-brief-preview" {
		t.Fatalf("loaded %v for %v (%v)", r["skill"], r["loaded_for"], r["error"])
	}
	contains(t, fmt.Sprint(r["skill_md"]), "Ask what the product is for", "the installed skill")
	contains(t, fmt.Sprint(r["notes"]), "bmad-product-brief-preview is not installed; bmad-product-brief", "the note")
}

// A v4 expansion pack's command starts in one model call: the task and
// template its text names are read before it, and the model is told to
// run them.
func TestV4PackCommandOneCall(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".bmad-core/core-config.yaml", "devStoryLocation: docs/stories\n")
	write(t, root, ".bmad-core/agents/pm.md", "# pm\n\n```yaml\nagent:\n  name: John\n  id: pm\n  title: PM\npersona:\n  role: PM\ncommands:\n  - help: Show help\ndependencies:\n  tasks:\n    - a.md\n```\n")
	write(t, root, ".bmad-stories/agents/editor.md", "# editor\n\n```yaml\nagent:\n  name: Edith\n  id: editor\n  title: Editor\npersona:\n  role: Editor\ncommands:\n"+
		"  - '*help - Show numbered list of commands'\n  - '*outline - Run task create-doc.md with template outline-tmpl.yaml'\n"+
		"dependencies:\n  tasks:\n    - create-doc.md\n  templates:\n    - outline-tmpl.yaml\n```\n")
	write(t, root, ".bmad-stories/tasks/create-doc.md", "# Create Document from Template\n\nWork through the template section by section with the user.\n")
	write(t, root, ".bmad-stories/templates/outline-tmpl.yaml", "template:\n  id: outline\n  name: Story Outline Template\n")
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	s, g := h.start("k", "editor")
	contains(t, g.Text, "*outline — Run task create-doc.md with template outline-tmpl.yaml", "the split command in the greeting")
	h.fm.Enqueue(fakemodel.Reply{Text: "Which story?"})
	if res := h.turn(s, "*outline"); h.fm.Calls() != 1 || res.Tools != 2 {
		t.Fatalf("*outline took %d calls, %d tools", h.fm.Calls(), res.Tools)
	}
	req := h.fm.Requests()[0]
	res := toolResults(t, req)
	if res[0]["path"] != "/project/.bmad-stories/tasks/create-doc.md" || !strings.Contains(fmt.Sprint(res[0]["content"]), "section by section") ||
		res[1]["path"] != "/project/.bmad-stories/templates/outline-tmpl.yaml" || !strings.Contains(fmt.Sprint(res[1]["content"]), "Story Outline Template") {
		t.Fatalf("first request's files: %v", res)
	}
	last := req.Messages[len(req.Messages)-1]
	contains(t, last.Content, "Its files are loaded above by the runtime", "the pick note")
	noHostPaths(t, h, root)
}
