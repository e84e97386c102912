package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// Slack's limit on one markdown block: "The cumulative length of all
// markdown blocks in a single payload cannot exceed 12,000 characters."
// https://docs.slack.dev/reference/block-kit/blocks/markdown-block
const slackMarkdownLimit = 12000

// A collection of 1,000 skills: the greeting shows the first items and a
// count, far within Slack's limit; the first request lists skills only up
// to the budget, says find_skills exists, offers it, stays under 40 KB,
// and find_skills finds a skill the prompt does not list, which then
// loads from its dot-folder.
func TestLargeCollection(t *testing.T) {
	dir := fixtures.SkillCollection(t, 1000)
	h := newHarness(t, harnessOpts{skills: dir})
	s, g := h.start("k", "agentbot")
	if len(g.Text) > slackMarkdownLimit/4 || len(g.Menu) != 20 || g.More != 980 {
		t.Fatalf("greeting: %d bytes, %d items shown, %d more", len(g.Text), len(g.Menu), g.More)
	}
	contains(t, g.Text, "…and 980 more.", "greeting count")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("find_skills", map[string]string{"query": "skill-0994 incident"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "skill-0994"})}},
		fakemodel.Reply{Text: "Loaded."},
	)
	h.turn(s, "I need the incident review skill, the 994th one")
	reqs := h.fm.Requests()
	first := reqs[0]
	if n := requestBytes(first); n > 40<<10 {
		t.Fatalf("first request: %d bytes, want under 40 KB", n)
	}
	sp := first.Messages[0].Content
	contains(t, sp, "more skills, not listed here: call find_skills", "the prompt names find_skills")
	if strings.Contains(sp, "skill-0994") {
		t.Fatal("the prompt lists every skill")
	}
	offered := false
	for _, tl := range first.Tools {
		offered = offered || (tl.Function != nil && tl.Function.Name == "find_skills")
	}
	if !offered {
		t.Fatal("find_skills is not offered")
	}
	found := toolResults(t, reqs[1])[0]
	hits, _ := found["skills"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["name"] != "skill-0994" {
		b, _ := json.Marshal(found)
		t.Fatalf("find_skills: %s", b)
	}
	loaded := toolResults(t, reqs[2])[1]
	if loaded["skill_root"] != "/skills/engineering/review/skill-0994" {
		t.Fatalf("load_skill: %v", loaded)
	}
	noHostPaths(t, h, dir)
}

// A small collection is listed whole, and find_skills is not offered.
func TestSmallCollectionNoFindSkills(t *testing.T) {
	dir := fixtures.SkillCollection(t, 10)
	h := newHarness(t, harnessOpts{skills: dir})
	s, g := h.start("k", "agentbot")
	if g.More != 0 || len(g.Menu) != 10 {
		t.Fatalf("greeting: %d items, %d more", len(g.Menu), g.More)
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "hi"})
	h.turn(s, "hello")
	req := h.fm.Requests()[0]
	for _, tl := range req.Tools {
		if tl.Function != nil && tl.Function.Name == "find_skills" {
			t.Fatal("find_skills offered for 10 skills")
		}
	}
	contains(t, req.Messages[0].Content, "- skill-0008: Generated skill number 8", "whole list")
}
