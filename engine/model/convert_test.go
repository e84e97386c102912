package model

import (
	"encoding/json"
	"testing"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// The wire form of a transcript: null content on a tool-only assistant
// message, reasoning sent back under the name it came, OpenRouter's details
// verbatim instead of their text, Gemini's signature on its call, and
// placeholders only where the provider's rules need them.
func TestWireMessages(t *testing.T) {
	in := []transcript.Message{
		{Role: transcript.RoleSystem, Content: "sys"},
		{Role: transcript.RoleUser, Content: "hi"},
		{Role: transcript.RoleAssistant, ReasoningContent: "r1", ToolCalls: []transcript.ToolCall{
			{ID: "c1", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}, ThoughtSignature: "sig"},
			{ID: "c2", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "list_files", Arguments: `{}`}},
		}},
		{Role: transcript.RoleTool, ToolCallID: "c1", Content: "result"},
		{Role: transcript.RoleAssistant, Content: "ok", ReasoningContent: "r2", ReasoningField: "reasoning", ReasoningDetails: json.RawMessage(`[{"type":"reasoning.text","text":"r2"}]`)},
		{Role: transcript.RoleAssistant, Content: "plain", ReasoningContent: "r3", ReasoningField: "reasoning"},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "c3", Type: "function", Function: transcript.FunctionCall{Name: "f", Arguments: "{}"}}}},
	}
	got, _ := json.Marshal(toWireMessages(in, styleOf("gpt-4.1", in)))
	want := `[{"role":"system","content":"sys"},{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"},"extra_content":{"google":{"thought_signature":"sig"}}},{"id":"c2","type":"function","function":{"name":"list_files","arguments":"{}"}}],"reasoning_content":"r1"},` +
		`{"role":"tool","content":"result","tool_call_id":"c1"},` +
		`{"role":"assistant","content":"ok","reasoning_details":[{"type":"reasoning.text","text":"r2"}]},` +
		`{"role":"assistant","content":"plain","reasoning":"r3"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"f","arguments":"{}"},"extra_content":{"google":{"thought_signature":"skip_thought_signature_validator"}}}],"reasoning_content":""}]`
	if string(got) != want {
		t.Fatalf("wire form:\n got %s\nwant %s", got, want)
	}
	// Without evidence of DeepSeek or Gemini, no placeholder is sent.
	plain := []transcript.Message{in[1], in[6]}
	got, _ = json.Marshal(toWireMessages(plain, styleOf("llama3.1:8b", plain)))
	if want := `[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"f","arguments":"{}"}}]}]`; string(got) != want {
		t.Fatalf("plain wire form:\n got %s\nwant %s", got, want)
	}
	tools := toOpenAITools([]llm.Tool{{Name: "read_file", Description: "reads", Parameters: json.RawMessage(`{"type":"object"}`)}})
	if len(tools) != 1 || tools[0].Function.Name != "read_file" || string(tools[0].Function.Parameters.(json.RawMessage)) != `{"type":"object"}` {
		t.Fatalf("tools: %+v", tools)
	}
	if toOpenAITools(nil) != nil {
		t.Fatal("no tools must give nil")
	}
}
