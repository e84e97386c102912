package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
)

// tools are two tool definitions for requests.
var testTools = []llm.Tool{
	{Name: "read_file", Description: "reads a file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "list_files", Description: "lists files", Parameters: []byte(`{"type":"object","properties":{}}`)},
}

// responsesClient is a client on the Responses API for a reasoning model.
func responsesClient(s *fakemodel.Server, edit func(*model.Config)) (*model.Client, *sleeps) {
	return newClient(s, func(cfg *model.Config) {
		cfg.API, cfg.Model = model.APIResponses, "gpt-5.6-terra"
		if edit != nil {
			edit(cfg)
		}
	})
}

// The Responses adapter streams text, assembles two parallel function
// calls, reports usage with reasoning tokens, keeps the encrypted reasoning
// item, and sends it back byte for byte before the calls on the next call;
// without it the fake refuses the follow-up as OpenAI does.
func TestResponsesToolCallsAndReasoningRoundTrip(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{
		Text: "Let me look.", Chunks: 4,
		ToolCalls: []fakemodel.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.md"}`},
			{ID: "call_b", Name: "list_files", Arguments: `{}`},
		},
		Usage: fakemodel.Usage{Prompt: 900, Cached: 512, Completion: 30},
	}, fakemodel.Reply{Text: "Both read."})
	c, _ := responsesClient(s, nil)
	var d deltas
	req := llm.Request{Messages: []transcript.Message{
		{Role: transcript.RoleSystem, Content: "You are helpful."},
		{Role: transcript.RoleUser, Content: "read both"},
	}, Tools: testTools}
	resp, err := c.Complete(context.Background(), req, d.on)
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Message
	if d.text() != "Let me look." || len(d.ds) != 4 || msg.Content != "Let me look." {
		t.Errorf("deltas %q content %q", d.ds, msg.Content)
	}
	if len(msg.ToolCalls) != 2 || msg.ToolCalls[0].ID != "call_a" || msg.ToolCalls[0].Function.Arguments != `{"path":"a.md"}` ||
		msg.ToolCalls[1].Function.Name != "list_files" || resp.FinishReason != "tool_calls" {
		t.Fatalf("calls %+v finish %q", msg.ToolCalls, resp.FinishReason)
	}
	if resp.Usage != (llm.Usage{Prompt: 900, Cached: 512, Completion: 94, Reasoning: 64}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	issued := s.IssuedReasoning()
	if len(msg.ReasoningItems) != 1 || issued[msg.ReasoningItems[0].ID] == "" ||
		issued[msg.ReasoningItems[0].ID] != msg.ReasoningItems[0].EncryptedContent {
		t.Fatalf("reasoning items %+v, issued %v", msg.ReasoningItems, issued)
	}
	first := rawField(t, s.Requests()[0])
	if first["store"] != false || !strings.Contains(string(s.Requests()[0].Raw), `"include":["reasoning.encrypted_content"]`) ||
		first["stream"] != true || !strings.HasSuffix(s.Requests()[0].Path, "/v1/responses") {
		t.Errorf("request: store %v stream %v path %s body %s", first["store"], first["stream"], s.Requests()[0].Path, s.Requests()[0].Raw)
	}

	next := append(append([]transcript.Message(nil), req.Messages...), msg,
		transcript.Message{Role: transcript.RoleTool, ToolCallID: "call_a", Content: "# A"},
		transcript.Message{Role: transcript.RoleTool, ToolCallID: "call_b", Content: "a.md"})
	resp2, err := c.Complete(context.Background(), llm.Request{Messages: next, Tools: testTools}, nil)
	if err != nil || resp2.Message.Content != "Both read." {
		t.Fatalf("follow-up: %v %+v", err, resp2)
	}
	sent := fakemodel.ReasoningSent(s.Requests()[1])
	if len(sent) != 1 || sent[0].ID != msg.ReasoningItems[0].ID || sent[0].EncryptedContent != issued[sent[0].ID] {
		t.Errorf("reasoning sent back %+v, want the issued item byte for byte", sent)
	}

	// The same follow-up without the reasoning item is refused.
	stripped := append([]transcript.Message(nil), next...)
	stripped[2].ReasoningItems = nil
	_, err = c.Complete(context.Background(), llm.Request{Messages: stripped, Tools: testTools}, nil)
	var e *llm.Error
	if !errors.As(err, &e) || e.Status != 400 || !strings.Contains(e.Message, "without its required 'reasoning' item") {
		t.Errorf("without reasoning: %v", err)
	}
	// And so is a tampered one.
	tampered := append([]transcript.Message(nil), next...)
	tampered[2].ReasoningItems = []transcript.ReasoningItem{{ID: msg.ReasoningItems[0].ID, EncryptedContent: msg.ReasoningItems[0].EncryptedContent + "x"}}
	_, err = c.Complete(context.Background(), llm.Request{Messages: tampered, Tools: testTools}, nil)
	if !errors.As(err, &e) || e.Code != "invalid_encrypted_content" {
		t.Errorf("tampered reasoning: %v", err)
	}
}

// A transcript written before reasoning items existed continues on the
// Responses API.
func TestResponsesOldTranscript(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "continuing"})
	c, _ := responsesClient(s, nil)
	old := `[{"role":"system","content":"sys"},{"role":"user","content":"hi"},
	 {"role":"assistant","tool_calls":[{"id":"call_menu_3_0","type":"function","function":{"name":"read_file","arguments":"{}"}}]},
	 {"role":"tool","tool_call_id":"call_menu_3_0","content":"ok"},{"role":"assistant","content":"done"},{"role":"user","content":"more"}]`
	var msgs []transcript.Message
	if err := jsonUnmarshal(old, &msgs); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), llm.Request{Messages: msgs, Tools: testTools}, nil)
	if err != nil || resp.Message.Content != "continuing" {
		t.Fatalf("%v %+v", err, resp)
	}
	if got := fakemodel.ReasoningSent(s.Requests()[0]); len(got) != 0 {
		t.Errorf("reasoning sent %v", got)
	}
}

// In auto, a model that OpenAI refuses tools for on Chat Completions is
// switched to the Responses API once, logged, and remembered.
func TestAutoSwitchesToResponsesOnce(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	var logs bytes.Buffer
	c, _ := newClient(s, func(cfg *model.Config) {
		cfg.Model, cfg.ReasoningEffort = "gpt-5.6-terra", "medium"
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	req := llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}
	for range 2 {
		if _, err := c.Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 3 || fakemodel.IsResponses(reqs[0]) || !fakemodel.IsResponses(reqs[1]) || !fakemodel.IsResponses(reqs[2]) {
		t.Fatalf("paths: %v", paths(reqs))
	}
	if n := strings.Count(logs.String(), "model API switched"); n != 1 || !strings.Contains(logs.String(), "level=INFO") ||
		!strings.Contains(logs.String(), "to=responses") {
		t.Errorf("log: %s", logs.String())
	}
	if !strings.Contains(string(reqs[1].Raw), `"reasoning":{"effort":"medium"}`) {
		t.Errorf("responses body %s", reqs[1].Raw)
	}
}

// go-openai's own refusal of gpt-6 tools on Chat Completions switches too;
// nothing reaches the chat endpoint.
func TestAutoSwitchesOnGoOpenAIRefusal(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	c, _ := newClient(s, func(cfg *model.Config) { cfg.Model, cfg.ReasoningEffort = "gpt-6-sol", "high" })
	if _, err := c.Complete(context.Background(), llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}, nil); err != nil {
		t.Fatal(err)
	}
	if reqs := s.Requests(); len(reqs) != 1 || !fakemodel.IsResponses(reqs[0]) {
		t.Errorf("paths: %v", paths(reqs))
	}
}

// An explicit API is never switched: the provider's refusal is the error.
func TestExplicitChatDoesNotSwitch(t *testing.T) {
	s := fakemodel.NewTB(t)
	c, _ := newClient(s, func(cfg *model.Config) {
		cfg.API, cfg.Model, cfg.ReasoningEffort = model.APIChat, "gpt-5.6-terra", "medium"
	})
	_, err := c.Complete(context.Background(), llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}, nil)
	if err == nil || !strings.Contains(err.Error(), "use /v1/responses") || s.Calls() != 1 {
		t.Errorf("err %v calls %d", err, s.Calls())
	}
}

// On Chat Completions, gpt-5.6's default effort is the one that lets tools
// work: "none".
func TestChatDefaultEffortLetsToolsWork(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "ok"})
	c, _ := newClient(s, func(cfg *model.Config) { cfg.API, cfg.Model = model.APIChat, "gpt-5.6-terra" })
	if _, err := c.Complete(context.Background(), llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}, nil); err != nil {
		t.Fatal(err)
	}
	if got := s.Requests()[0].ReasoningEffort; got != "none" {
		t.Errorf("reasoning_effort %q", got)
	}
}

// Errors inside a 200 stream are errors with the provider's message:
// retried when transient and before any text, never retried after text
// (Partial), never retried when the request is at fault.
func TestResponsesStreamFaults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     fakemodel.StreamFault
		wantTries int
		partial   bool
		wantErr   string
	}{
		{"error event before text, transient", fakemodel.StreamFault{Event: "error", Code: "server_error", Message: "The server had an error"}, 2, false, ""},
		{"response.failed before text, transient", fakemodel.StreamFault{Event: "response.failed", Code: "rate_limit_exceeded", Message: "slow down"}, 2, false, ""},
		{"error event after text", fakemodel.StreamFault{Event: "error", Code: "server_error", Message: "The server had an error", AfterDeltas: 1}, 1, true, "The server had an error"},
		{"response.failed, request at fault", fakemodel.StreamFault{Event: "response.failed", Code: "invalid_prompt", Message: "Invalid prompt: flagged"}, 1, false, "Invalid prompt: flagged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakemodel.NewTB(t)
			s.EnqueueStreamFault(tc.fault)
			s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "whole answer", Chunks: 3} })
			c, _ := responsesClient(s, nil)
			var d deltas
			resp, err := c.Complete(context.Background(), userRequest("hi"), d.on)
			if tc.wantErr == "" {
				if err != nil || resp.Tries != tc.wantTries || resp.Message.Content != "whole answer" || d.text() != "whole answer" {
					t.Fatalf("err %v resp %+v deltas %q", err, resp, d.text())
				}
				return
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.Partial != tc.partial || e.Tries != tc.wantTries || !strings.Contains(err.Error(), tc.wantErr) || e.Code != tc.fault.Code {
				t.Fatalf("err %v (%+v)", err, e)
			}
			if s.Calls() != tc.wantTries {
				t.Errorf("calls %d", s.Calls())
			}
		})
	}
}

// A stream cut in the middle of a function call's arguments never yields
// the call: the attempt is incomplete and retried, and the retry's whole
// call is what comes back.
func TestResponsesTruncatedArgumentsNeverReturned(t *testing.T) {
	s := fakemodel.NewTB(t)
	call := []fakemodel.ToolCall{{ID: "call_x", Name: "read_file", Arguments: `{"path":"long/path/to/a.md"}`}}
	s.Enqueue(fakemodel.Reply{ToolCalls: call, Chunks: 4, DropMidStream: true, DropAfter: 2}, fakemodel.Reply{ToolCalls: call})
	c, _ := responsesClient(s, nil)
	resp, err := c.Complete(context.Background(), llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}, nil)
	if err != nil || resp.Tries != 2 || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Function.Arguments != call[0].Arguments {
		t.Fatalf("err %v resp %+v", err, resp)
	}
	// With one try only, the cut is an error, not a short call.
	s.Enqueue(fakemodel.Reply{ToolCalls: call, Chunks: 4, DropMidStream: true, DropAfter: 2})
	c1, _ := responsesClient(s, func(cfg *model.Config) { cfg.MaxTries = 1 })
	resp, err = c1.Complete(context.Background(), llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}, nil)
	if err == nil || resp != nil {
		t.Fatalf("cut stream: resp %+v err %v", resp, err)
	}
}

// Events and fields the client does not know are ignored.
func TestResponsesIgnoresUnknownReasoningFields(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.SetUnknownReasoningFields(true)
	s.Enqueue(fakemodel.Reply{Text: "fine"})
	c, _ := responsesClient(s, nil)
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil || resp.Message.Content != "fine" || len(resp.Message.ReasoningItems) != 1 {
		t.Fatalf("err %v resp %+v", err, resp)
	}
}

// A response cut by max_output_tokens finishes with "length".
func TestResponsesIncomplete(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "partial answ", FinishReason: "length"})
	c, _ := responsesClient(s, func(cfg *model.Config) { cfg.MaxTokens = 5 })
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil || resp.FinishReason != "length" || resp.Message.Content != "partial answ" {
		t.Fatalf("err %v resp %+v", err, resp)
	}
	if rawField(t, s.Requests()[0])["max_output_tokens"] != float64(5) {
		t.Errorf("body %s", s.Requests()[0].Raw)
	}
}

// Azure's Responses API is its v1 surface: /openai/v1/responses, the
// deployment as the model, the api-key header; auto picks it for a
// deployment whose family (AGENTBOT_MODEL_FAMILY) needs it.
func TestAzureResponses(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.RequireKey(testKey)
	s.SetReasoningModels("prod-reasoner")
	s.Enqueue(fakemodel.Reply{Text: "from azure v1"})
	c, _ := newClient(s, func(cfg *model.Config) {
		cfg.APIType, cfg.BaseURL, cfg.Model, cfg.Family = "azure", s.RootURL(), "prod-reasoner", "gpt-5.6"
	})
	resp, err := c.Complete(context.Background(), llm.Request{Messages: userRequest("hi").Messages, Tools: testTools}, nil)
	if err != nil || resp.Message.Content != "from azure v1" {
		t.Fatal(err, resp)
	}
	r := s.Requests()[0]
	if r.Path != "/openai/v1/responses" || r.Model != "prod-reasoner" || r.Header.Get("api-key") != testKey ||
		r.Header.Get("Authorization") != "" || len(resp.Message.ReasoningItems) != 1 {
		t.Errorf("path %s model %s headers %v reasoning %v", r.Path, r.Model, r.Header, resp.Message.ReasoningItems)
	}
}

// Without OPENAI_API_VERSION, Azure's chat gets a GA api-version that takes
// stream_options, not go-openai's old default.
func TestAzureDefaultAPIVersion(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "ok"})
	c, _ := newClient(s, func(cfg *model.Config) { cfg.APIType, cfg.BaseURL, cfg.Model = "azure", s.RootURL(), "chat-dep" })
	if _, err := c.Complete(context.Background(), userRequest("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if q := s.Requests()[0].Query; q != "api-version="+model.DefaultAzureAPIVersion {
		t.Errorf("query %q", q)
	}
}

// A context-length refusal on the Responses API is one for the engine.
func TestResponsesContextLength(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.SetContextWindow(10)
	c, _ := responsesClient(s, nil)
	_, err := c.Complete(context.Background(), userRequest(strings.Repeat("long ", 100)), nil)
	if n, ok := llm.ContextWindow(err); !llm.IsContextLength(err) || !ok || n != 10 {
		t.Errorf("err %v window %d", err, n)
	}
}

// paths lists the paths of requests.
func paths(reqs []fakemodel.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Path
	}
	return out
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
