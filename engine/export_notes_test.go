package engine

import (
	"strings"
	"testing"

	"agentbot/engine/catalog"
	"agentbot/engine/export"
	"agentbot/engine/menu"
	"agentbot/engine/prompt"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
	"agentbot/engine/window"
)

// An export labels what the runtime wrote in the user's or the agent's
// place as a runtime note, from the runtime's own note builders, and keeps
// the user's words of a menu pick as a User line.
func TestExportLabelsRuntimeNotes(t *testing.T) {
	item := catalog.MenuItem{Cmd: "*brief", Description: "Write a product brief"}
	a := &catalog.Agent{ID: "pl", Menu: []catalog.MenuItem{item}}
	notes := map[string]string{
		"session facts":       prompt.SessionFacts(vars.Vars{"date": "2026-01-02"}, nil),
		"skill session facts": prompt.SkillSessionFacts(a, vars.Vars{"date": "2026-01-02"}),
		"limit":               limitNote,
		"budget":              budgetNote,
		"summary":             window.SummaryMessage(&transcript.Compaction{Summary: "we wrote a brief"}),
		"stop":                "(The user stopped this turn here. Continue from what was said so far when they write again.)",
		"failed":              "(This turn failed before an answer; the user wrote again.)",
	}
	for name, note := range notes {
		if !export.IsRuntimeNote(note) {
			t.Errorf("%s note is not recognised: %q", name, note)
		}
	}
	s := &transcript.Session{ID: "s1", AgentID: "pl", Messages: []transcript.Message{
		{Role: transcript.RoleUser, Content: notes["session facts"]},
		{Role: transcript.RoleAssistant, Content: "Hello, I am Maren."},
		{Role: transcript.RoleUser, Content: menu.PickNote(a, 0, item, "*brief", "", true)},
		{Role: transcript.RoleAssistant, Content: "Who asks for reorder?"},
		{Role: transcript.RoleUser, Content: "(B2B buyers) and nobody else"},
		{Role: transcript.RoleAssistant, Content: notes["stop"]},
		{Role: transcript.RoleUser, Content: notes["limit"]},
	}}
	md := ExportMarkdown(s)
	for _, want := range []string{
		"\n**Runtime note:**\n\n[session start]",
		"\n**Agent:**\n\nHello, I am Maren.\n",
		"\n**User:**\n\n*brief\n\n**Runtime note:**\n\n(The user picked menu item 1",
		"\n**User:**\n\n(B2B buyers) and nobody else\n",
		"\n**Runtime note:**\n\n(The user stopped this turn",
		"\n**Runtime note:**\n\n(Runtime: the limit",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("export lacks %q:\n%s", want, md)
		}
	}
	for _, bad := range []string{"**User:**\n\n[session start]", "**Agent:**\n\n(The user stopped", "**User:**\n\n(Runtime:"} {
		if strings.Contains(md, bad) {
			t.Errorf("export holds %q:\n%s", bad, md)
		}
	}
}
