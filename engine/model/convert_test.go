package model

import (
	"encoding/json"
	"reflect"
	"testing"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

func TestConvertRoundTrip(t *testing.T) {
	in := []transcript.Message{
		{Role: transcript.RoleSystem, Content: "sys"},
		{Role: transcript.RoleUser, Content: "hi"},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{
			{ID: "c1", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
			{ID: "c2", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "list_files", Arguments: `{}`}},
		}},
		{Role: transcript.RoleTool, ToolCallID: "c1", Content: "result"},
		{Role: transcript.RoleAssistant, Content: "no", Refusal: "refused"},
	}
	oa := toOpenAIMessages(in)
	if len(oa) != len(in) || string(oa[2].ToolCalls[1].Type) != "function" || oa[3].ToolCallID != "c1" {
		t.Fatalf("converted: %+v", oa)
	}
	var back []transcript.Message
	for _, m := range oa {
		back = append(back, fromOpenAIMessage(m))
	}
	if !reflect.DeepEqual(back, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", back, in)
	}
	// The wire JSON of both is the same shape.
	a, _ := json.Marshal(in)
	b, _ := json.Marshal(back)
	if string(a) != string(b) {
		t.Fatalf("json differs:\n%s\n%s", a, b)
	}
	tools := toOpenAITools([]llm.Tool{{Name: "read_file", Description: "reads", Parameters: json.RawMessage(`{"type":"object"}`)}})
	if len(tools) != 1 || tools[0].Function.Name != "read_file" || string(tools[0].Function.Parameters.(json.RawMessage)) != `{"type":"object"}` {
		t.Fatalf("tools: %+v", tools)
	}
	if toOpenAITools(nil) != nil {
		t.Fatal("no tools must give nil")
	}
}
