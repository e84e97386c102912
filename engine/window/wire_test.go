package window

import (
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine/transcript"
)

func call(id string) transcript.ToolCall {
	return transcript.ToolCall{ID: id, Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "read_file", Arguments: "{}"}}
}

// ProviderForm: strict ids (the same for a call and its result, distinct
// for distinct ids, stable), an assistant message between tool results and
// a user message, text-only assistant messages merged into the next, no
// empty text; the input is not changed.
func TestProviderForm(t *testing.T) {
	in := []transcript.Message{
		{Role: transcript.RoleSystem, Content: "sys"},
		{Role: transcript.RoleUser, Content: "hi"},
		{Role: transcript.RoleAssistant, Content: "Hello, pick one."},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{call("call_menu_3_0"), call("abcDEF123")}, ReasoningContent: "r"},
		{Role: transcript.RoleTool, ToolCallID: "call_menu_3_0", Content: "one"},
		{Role: transcript.RoleTool, ToolCallID: "abcDEF123", Content: ""},
		{Role: transcript.RoleUser, Content: "(Runtime: note)"},
		{Role: transcript.RoleAssistant, Content: ""},
	}
	before, _ := json.Marshal(in)
	out := ProviderForm(in)
	after, _ := json.Marshal(in)
	if string(before) != string(after) {
		t.Fatal("ProviderForm changed its input")
	}
	roles := []string{}
	for _, m := range out {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,tool,assistant,user,assistant" {
		t.Fatalf("roles %s", got)
	}
	checkMerged(t, in, out)
}

// checkMerged checks the merged message, ids and placeholders of
// TestProviderForm's output.
func checkMerged(t *testing.T, in, out []transcript.Message) {
	t.Helper()
	merged := out[2]
	if merged.Content != "Hello, pick one." || len(merged.ToolCalls) != 2 || merged.ReasoningContent != "r" {
		t.Errorf("merged %+v", merged)
	}
	id0, id1 := merged.ToolCalls[0].ID, merged.ToolCalls[1].ID
	if !strictID(id0) || id1 != "abcDEF123" || out[3].ToolCallID != id0 || out[4].ToolCallID != id1 || id0 != WireCallID("call_menu_3_0") {
		t.Errorf("ids %q %q results %q %q", id0, id1, out[3].ToolCallID, out[4].ToolCallID)
	}
	if out[4].Content != noOutput || out[5].Content != bridgeText || out[7].Content != emptyText {
		t.Errorf("placeholders %q %q %q", out[4].Content, out[5].Content, out[7].Content)
	}
	if again := ProviderForm(in); again[2].ToolCalls[0].ID != id0 {
		t.Error("ids are not stable across requests")
	}
}

// Two ids whose hashes collide still go out distinct.
func TestIDMapDistinct(t *testing.T) {
	var m idMap
	a := m.of("call_a")
	m.from[hashedID("call_b", 0)] = "someone-else" // force a collision for call_b
	b := m.of("call_b")
	if a == b || !strictID(a) || !strictID(b) || m.of("call_a") != a {
		t.Fatalf("a %q b %q", a, b)
	}
}

// NewCallID is deterministic, strict and unique in the session.
func TestNewCallID(t *testing.T) {
	s := &transcript.Session{ID: "sess1"}
	first := NewCallID(s.Messages, s.ID, 4, 0)
	if !strictID(first) || NewCallID(s.Messages, s.ID, 4, 0) != first || NewCallID(s.Messages, s.ID, 4, 1) == first {
		t.Fatalf("ids %q", first)
	}
	s.Messages = []transcript.Message{{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{call(first)}}}
	if again := NewCallID(s.Messages, s.ID, 4, 0); again == first || !strictID(again) {
		t.Fatalf("a taken id was given again: %q", again)
	}
}

// Reasoning of finished turns may be left out, except DeepSeek's for turns
// with tool calls; the current turn's never.
func TestReasoningDroppable(t *testing.T) {
	msgs := []transcript.Message{
		{Role: transcript.RoleSystem},
		{Role: transcript.RoleUser, Content: "q1"},
		{Role: transcript.RoleAssistant, Content: "a1", ReasoningContent: "deepseek, no tools"},                           // 2: droppable
		{Role: transcript.RoleUser, Content: "q2"},                                                                        //
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{call("x")}, ReasoningContent: "deepseek tools"}, // 4: kept
		{Role: transcript.RoleTool, ToolCallID: "x", Content: "r"},                                                        //
		{Role: transcript.RoleAssistant, Content: "a2", ReasoningContent: "deepseek, same turn"},                          // 6: kept
		{Role: transcript.RoleUser, Content: "q3"},                                                                        //
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "y", ThoughtSignature: "sig"}}},            // 8: droppable (Gemini)
		{Role: transcript.RoleTool, ToolCallID: "y", Content: "r"},                                                        //
		{Role: transcript.RoleUser, Content: "q4"},                                                                        //
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "z", ThoughtSignature: "sig2"}}},           // 11: current turn
	}
	for i, want := range map[int]bool{2: true, 4: false, 6: false, 8: true, 11: false, 1: false} {
		if got := reasoningDroppable(msgs, i); got != want {
			t.Errorf("message %d: droppable %v, want %v", i, got, want)
		}
	}
}
