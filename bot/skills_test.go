package bot_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage"
)

// A BMAD 6.12 project in Slack: /agent use pm sets the channel default; a
// mention greets with the icon first and the menu as buttons showing code
// and description, at no model cost; the PRD button starts bmad-prd in one
// model call; a document written several times in the turn arrives as one
// upload with its final bytes.
func TestSlackSkillsAgent(t *testing.T) {
	root := fixtures.Copy(t, fixtures.V612)
	r := newRig(t, rigOpts{bmad: []string{root}})
	got := r.slash(user, channel, "use pm")
	has(t, got, "John", "/agent use pm")

	thread, _ := r.mention("", "")
	greet := r.waitBotMessages(thread, 1)[0]
	g := text(greet)
	if !strings.HasPrefix(strings.TrimSpace(greet.MarkdownText()), "📋 Hello") {
		t.Fatalf("greeting does not lead with the icon: %q", greet.MarkdownText())
	}
	has(t, g, "bmad-help", "greeting")
	has(t, g, "`PRD` — Create, update, or validate a PRD", "greeting menu")
	btns := buttons(t, greet)
	if btns["menu:0"] != "PRD" || btns["menu:3"] != "CC" || len(btns) != 4 {
		t.Fatalf("menu buttons = %v", btns)
	}
	if r.model.Calls() != 0 {
		t.Fatalf("the greeting made %d model calls", r.model.Calls())
	}
	r.waitFor("the greeting alone", func() bool { return len(r.botMessages(thread)) == 1 })

	doc := "{planning_artifacts}/prds/prd-bmadnew/prd.md"
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": doc, "content": "---\nstatus: draft\n---\n# PRD\n"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": doc, "append": "\n## Vision\nReorder in one click.\n"})}},
		fakemodel.Reply{Text: "📋 I started the PRD. Who is it for?"},
	)
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: greet.TS, ThreadTS: thread, ActionID: "menu:0", Value: "PRD"})
	r.waitFor("the answer", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "Who is it for?") {
				return true
			}
		}
		return false
	})
	reqs := r.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3 (one to start the skill, two for the writes)", len(reqs))
	}
	first := string(reqs[0].Raw)
	if !strings.Contains(first, "# BMad PRD") || !strings.Contains(first, `load_skill`) {
		t.Fatalf("the first request lacks the preloaded bmad-prd: %.3000s", first)
	}
	var startsWithSkill bool
	for _, m := range reqs[0].Messages {
		for _, tc := range m.ToolCalls {
			var a map[string]string
			_ = json.Unmarshal([]byte(tc.Function.Arguments), &a)
			startsWithSkill = startsWithSkill || (tc.Function.Name == "load_skill" && a["name"] == "bmad-prd")
		}
	}
	if !startsWithSkill {
		t.Fatal("the button did not start bmad-prd before the first model call")
	}
	ups := r.slack.Uploads()
	if len(ups) != 1 {
		t.Fatalf("%d uploads, want 1", len(ups))
	}
	if want := "---\nstatus: draft\n---\n# PRD\n\n## Vision\nReorder in one click.\n"; string(ups[0].Content) != want || ups[0].Title != "prd.md" {
		t.Fatalf("upload %q (%s), want the final bytes", ups[0].Content, ups[0].Title)
	}
	if strings.Contains(first, root) {
		t.Fatal("a request names the project's host path")
	}
}

// An agent whose override is invalid says in the thread that it cannot
// start and why, and calls no model.
func TestSlackSkillsAgentCannotStart(t *testing.T) {
	ctx := context.Background()
	root := fixtures.Copy(t, fixtures.V612)
	writeFile(t, root+"/_bmad/custom/bmad-agent-pm.toml", "[agent]\nicon = = \"x\"\n")
	r := newRig(t, rigOpts{bmad: []string{root}})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "pm")
	thread, _ := r.mention("hello", "")
	m := r.waitBotMessages(thread, 1)[0]
	has(t, text(m), "can't start here", "refusal")
	has(t, text(m), "_bmad/custom/bmad-agent-pm.toml:2", "refusal names the file and line")
	if strings.Contains(text(m), root) {
		t.Fatal("the refusal names a host path")
	}
	if r.model.Calls() != 0 {
		t.Fatal("a model call was made")
	}
}

// writeFile writes a file, failing the test on error.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A collection of 1,000 skills in Slack: the generic agent's greeting is
// accepted by Slack (one markdown block far under its 12,000 characters,
// 20 buttons and a count), and the first request stays under 40 KB.
func TestSlackLargeCollection(t *testing.T) {
	ctx := context.Background()
	dir := fixtures.SkillCollection(t, 1000)
	r := newRig(t, rigOpts{skills: dir})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "agentbot")
	thread, _ := r.mention("", "")
	greet := r.waitBotMessages(thread, 1)[0]
	md := greet.MarkdownText()
	has(t, md, "…and 980 more.", "greeting count")
	if len(md) > 6000 {
		t.Fatalf("greeting markdown: %d bytes", len(md))
	}
	if btns := buttons(t, greet); len(btns) != 20 || btns["menu:0"] != "skill-0000" {
		t.Fatalf("buttons: %d %v", len(btns), btns["menu:0"])
	}
	r.model.Enqueue(fakemodel.Reply{Text: "Which topic?"})
	r.mention("help me with pricing", thread)
	r.waitFor("the answer", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "Which topic?") {
				return true
			}
		}
		return false
	})
	reqs := r.model.Requests()
	if len(reqs) != 1 || len(reqs[0].Raw) > 40<<10 || !strings.Contains(string(reqs[0].Raw), `"name":"find_skills"`) {
		t.Fatalf("%d requests; first %d bytes", len(reqs), len(reqs[0].Raw))
	}
}
