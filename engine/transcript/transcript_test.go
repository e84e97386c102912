package transcript

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestLatest(t *testing.T) {
	got := Latest([]Output{{Path: "a.md", Version: 1}, {Path: "b.md", Version: 1}, {Path: "a.md", Version: 3}, {Path: "a.md", Version: 2}})
	want := []Output{{Path: "a.md", Version: 3}, {Path: "b.md", Version: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Latest = %+v, want %+v", got, want)
	}
	if Latest(nil) != nil {
		t.Fatal("Latest(nil) must be nil")
	}
}

// A message as go-openai wrote it (with fields agentbot does not keep)
// decodes, and encodes back to the same chat-message shape; its reasoning
// text is kept.
func TestMessageJSONCompatible(t *testing.T) {
	old := `{"role":"assistant","content":"","name":"x","reasoning_content":"r","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}]}`
	var m Message
	if err := json.Unmarshal([]byte(old), &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != RoleAssistant || len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "read_file" || m.ToolCalls[0].ID != "c1" {
		t.Fatalf("decoded %+v", m)
	}
	b, _ := json.Marshal(m)
	if want := `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{}"}}],"reasoning_content":"r"}`; string(b) != want {
		t.Fatalf("encoded %s, want %s", b, want)
	}
}

// Reasoning state round-trips through JSON: OpenRouter's details as the
// same JSON values, the Gemini signature on its call; a message without
// any encodes without the fields, as before.
func TestReasoningRoundTrip(t *testing.T) {
	m := Message{Role: RoleAssistant, ReasoningContent: "think", ReasoningField: "reasoning",
		ReasoningDetails: json.RawMessage(`[{"type":"reasoning.encrypted","data":"QUJD","format":"google-gemini-v1","index":0}]`),
		ToolCalls:        []ToolCall{{ID: "a", Type: ToolTypeFunction, Function: FunctionCall{Name: "f", Arguments: "{}"}, ThoughtSignature: "sig=="}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) || !back.HasReasoning() || back.ReasoningBytes() != len("think")+len(m.ReasoningDetails)+len("sig==") {
		t.Fatalf("round trip %+v", back)
	}
	back.DropReasoning()
	if back.HasReasoning() || m.ToolCalls[0].ThoughtSignature != "sig==" {
		t.Fatalf("DropReasoning: %+v (original call %+v)", back, m.ToolCalls[0])
	}
	plain, _ := json.Marshal(Message{Role: RoleAssistant, Content: "hi"})
	if string(plain) != `{"role":"assistant","content":"hi"}` {
		t.Fatalf("plain message %s", plain)
	}
}

func TestUsage(t *testing.T) {
	u := Usage{Prompt: 10, Cached: 4, Completion: 2, Calls: 1}.Add(Usage{Prompt: 1, Completion: 1, Calls: 1})
	if u != (Usage{Prompt: 11, Cached: 4, Completion: 3, Calls: 2}) || u.Tokens() != 14 {
		t.Fatalf("Add = %+v, Tokens %d", u, u.Tokens())
	}
	b, _ := json.Marshal(u)
	if string(b) != `{"prompt":11,"cached":4,"completion":3,"calls":2}` {
		t.Fatalf("usage JSON %s", b)
	}
}

func TestUnfinished(t *testing.T) {
	s := &Session{Messages: []Message{{Role: RoleSystem}, {Role: RoleUser, Content: "hi"}}}
	if !s.Unfinished() {
		t.Error("a transcript ending with the user's message is unfinished")
	}
	s.Messages = append(s.Messages, Message{Role: RoleAssistant, Content: "hello"})
	if s.Unfinished() {
		t.Error("a transcript ending with an answer is finished")
	}
	var nilS *Session
	if nilS.Unfinished() {
		t.Error("nil session is not unfinished")
	}
}

func TestNextVersion(t *testing.T) {
	outs := []Output{{Path: "a.md", Version: 1}, {Path: "b.md", Version: 4}, {Path: "a.md", Version: 3}, {Path: "a.md", Version: 2}}
	for path, want := range map[string]int{"a.md": 4, "b.md": 5, "new.md": 1} {
		if got := NextVersion(outs, path); got != want {
			t.Errorf("NextVersion(%s) = %d, want %d", path, got, want)
		}
	}
	if got := NextVersion(nil, "a.md"); got != 1 {
		t.Errorf("NextVersion(nil) = %d, want 1", got)
	}
}

// SetMeta sets an entry, creating the map, and an empty value deletes it.
func TestSessionSetMeta(t *testing.T) {
	var s Session
	s.SetMeta("a", "1")
	s.SetMeta("b", "2")
	if s.Meta["a"] != "1" || s.Meta["b"] != "2" {
		t.Fatalf("meta = %v", s.Meta)
	}
	s.SetMeta("a", "")
	if _, ok := s.Meta["a"]; ok || len(s.Meta) != 1 {
		t.Fatalf("after deleting a: %v", s.Meta)
	}
	var empty Session
	empty.SetMeta("x", "") // deleting from no map is a no-op
	if empty.Meta != nil {
		t.Fatalf("an empty value created the map: %v", empty.Meta)
	}
}
