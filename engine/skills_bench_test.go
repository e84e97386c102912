package engine_test

import (
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine/transcript"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// requestBytes is what one request carries: every message's content, the
// tool calls' arguments and the tool definitions.
func requestBytes(req fakemodel.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	tools, _ := json.Marshal(req.Tools)
	return n + len(tools)
}

// BenchmarkSkillFirstPRDQuestion measures a whole "chat --agent pm, then
// PRD" against the 6.12 project: activation plus the one model call that
// asks the first PRD question. It reports the bytes of that request beside
// the BMAD content it carries (pm's SKILL.md with the merged persona,
// bmad-prd's SKILL.md, its resolved customization and config, and the file
// its activation names), and the share the runtime adds (target under 30%).
func BenchmarkSkillFirstPRDQuestion(b *testing.B) {
	root := fixtures.Dir(b, fixtures.V612)
	h := newHarness(b, harnessOpts{bmad: []string{root}})
	h.fm.Handle(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "📋 Hi Ines! What problem does the product solve?"}
	})
	var req fakemodel.Request
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		s, _ := h.start("bench-"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune(i)), "pm")
		h.turn(s, "PRD")
		reqs := h.fm.Requests()
		req = reqs[len(reqs)-1]
	}
	total := requestBytes(req)
	persona := len(sectionOf(req.Messages[0].Content, "## Your skill file"))
	var skillMD, bmad int
	for _, m := range req.Messages {
		if m.Role != transcript.RoleTool {
			continue
		}
		var r struct {
			SkillMD       string            `json:"skill_md"`
			Customization json.RawMessage   `json:"customization"`
			Config        map[string]string `json:"config"`
			Activation    []struct {
				Content string `json:"content"`
			} `json:"activation_files"`
		}
		if err := json.Unmarshal([]byte(m.Content), &r); err != nil {
			b.Fatal(err)
		}
		skillMD = len(r.SkillMD)
		cfg, _ := json.Marshal(r.Config)
		bmad = len(r.SkillMD) + len(r.Customization) + len(cfg)
		for _, f := range r.Activation {
			bmad += len(f.Content)
		}
	}
	bmad += persona
	b.ReportMetric(float64(total), "request-B")
	b.ReportMetric(float64(skillMD), "prd-skill.md-B")
	b.ReportMetric(float64(persona), "persona-B")
	b.ReportMetric(float64(bmad), "bmad-content-B")
	b.ReportMetric(100*float64(total-bmad)/float64(total), "runtime-%")
	b.ReportMetric(float64(len(req.Raw)), "wire-B")
}

// sectionOf returns text from the line starting with head to the next
// "## " heading at the start of a line after it.
func sectionOf(text, head string) string {
	i := strings.Index(text, head)
	if i < 0 {
		return ""
	}
	rest := text[i+len(head):]
	if j := strings.Index(rest, "\n## Persistent facts"); j >= 0 {
		rest = rest[:j]
	}
	for _, stop := range []string{"\n## Menu", "\n## Skills you can load", "\n## This runtime"} {
		if j := strings.Index(rest, stop); j >= 0 {
			rest = rest[:j]
		}
	}
	return head + rest
}

// BenchmarkFirstRequestSkills1000 measures the first request of a bundle
// agent (product-lead) when a collection of 1,000 shared skills is
// configured, against the same request with no skills: it reports both
// sizes and their ratio.
func BenchmarkFirstRequestSkills1000(b *testing.B) {
	size := func(skills string) int {
		h := newHarness(b, harnessOpts{skills: skills})
		h.fm.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "Hello!"} })
		s, _ := h.start("k", "product-lead")
		h.turn(s, "hello")
		return requestBytes(h.fm.Requests()[0])
	}
	dir := fixtures.SkillCollection(b, 1000)
	var none, many int
	for b.Loop() {
		none, many = size(""), size(dir)
	}
	b.ReportMetric(float64(none), "bytes-no-skills")
	b.ReportMetric(float64(many), "bytes-1000-skills")
	b.ReportMetric(float64(many)/float64(none), "ratio")
}
