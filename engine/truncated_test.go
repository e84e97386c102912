package engine_test

import (
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
)

// An answer cut at the model's output limit (finish_reason "length") is
// kept marked as cut, the user is told, and its tool calls, whose
// arguments may be cut too, are never run.
func TestAnswerCutAtTheOutputLimit(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/cut", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Text: "Here is the brief: it starts", FinishReason: "length",
		ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: `{"path":"brief.md","content":"# Bri`}}})
	res := h.turn(s, "write it")
	if !strings.HasPrefix(res.Text, "Here is the brief: it starts") || !strings.Contains(res.Text, "cut off") || res.Tools != 0 {
		t.Fatalf("result = %+v", res)
	}
	last := s.Messages[len(s.Messages)-1]
	if last.Role != transcript.RoleAssistant || len(last.ToolCalls) != 0 || !strings.Contains(last.Content, "cut off") {
		t.Fatalf("stored answer = %+v", last)
	}
	if len(s.Outputs) != 0 || len(s.Audit) != 0 || h.fm.Calls() != 1 {
		t.Fatalf("a cut tool call ran: outputs %v audit %v calls %d", s.Outputs, s.Audit, h.fm.Calls())
	}
	notices := h.eventsOf(engine.EventNotice)
	if len(notices) != 1 || !strings.Contains(notices[0].Text, "output token limit") {
		t.Fatalf("notices = %+v", notices)
	}
}
