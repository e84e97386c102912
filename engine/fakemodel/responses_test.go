package fakemodel_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
)

// post sends a raw Responses request and returns the status and body.
func post(t *testing.T, s *fakemodel.Server, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/responses", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The Responses endpoint refuses what OpenAI refuses, with its error shape.
func TestResponsesValidation(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"no model", `{"input":"hi"}`, 400, "Missing required parameter: 'model'."},
		{"chat-shaped tool", `{"model":"gpt-4.1","input":"hi","tools":[{"type":"function","function":{"name":"f"}}]}`, 400, "Missing required parameter: 'tools[0].name'."},
		{"output without call", `{"model":"gpt-4.1","input":[{"type":"function_call_output","call_id":"call_1","output":"x"}]}`, 400, "No tool call found for function call output with call_id call_1."},
		{"call without output", `{"model":"gpt-4.1","input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}]}`, 400, "No tool output found for function call call_1."},
		{"reasoning last", `{"model":"gpt-5.2","input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_x","summary":[]}]}`, 400, "Item 'rs_x' of type 'reasoning' was provided without its required following item."},
		{"unknown encrypted content", `{"model":"gpt-5.2","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_x","summary":[],"encrypted_content":"gAAAAAx"}]}`, 400, "could not be verified"},
		{"stateless reasoning without content", `{"model":"gpt-5.2","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_x","summary":[]},{"role":"assistant","content":"a"}]}`, 404, "Items are not persisted when `store` is set to false."},
		{"effort not taken", `{"model":"gpt-5.1","input":"hi","reasoning":{"effort":"minimal"}}`, 400, "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model."},
		{"effort for a chat model", `{"model":"gpt-4.1","input":"hi","reasoning":{"effort":"low"}}`, 400, "Unsupported parameter: 'reasoning.effort' is not supported with this model."},
		{"temperature while reasoning", `{"model":"o3","input":"hi","temperature":0}`, 400, "Unsupported parameter: 'temperature'"},
		{"plain", `{"model":"gpt-4.1","input":"hi","temperature":0}`, 200, `"status":"completed"`},
	} {
		status, body := post(t, s, tc.body)
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want %d with %q", tc.name, status, body, tc.status, tc.want)
		}
		if status != 200 {
			var e struct {
				Error struct {
					Message string `json:"message"`
					Type    string `json:"type"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(body), &e) != nil || e.Error.Type == "" {
				t.Errorf("%s: not OpenAI's error shape: %s", tc.name, body)
			}
		}
	}
}

// Chat Completions refuse function tools with a reasoning effort for the
// families that need the Responses API, and max_tokens for reasoning
// models, in OpenAI's words.
func TestChatRulesForOpenAIReasoningModels(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	chat := func(body string) (int, string) {
		resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tools := `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"model":"gpt-5.6-terra","messages":[{"role":"user","content":"hi"}],` + tools + `}`, 400,
			"Function tools with reasoning_effort are not supported for gpt-5.6-terra in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'."},
		{`{"model":"gpt-5.6-terra","reasoning_effort":"none","messages":[{"role":"user","content":"hi"}],` + tools + `}`, 200, "ok"},
		{`{"model":"o3-mini","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 400, "Use 'max_completion_tokens' instead."},
		{`{"model":"gpt-4.1","reasoning_effort":"low","messages":[{"role":"user","content":"hi"}]}`, 400, "Unsupported parameter: 'reasoning_effort'"},
	} {
		if status, body := chat(tc.body); status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s", tc.body, status, body)
		}
	}
}
