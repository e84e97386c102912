package model_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
)

// toolTurn is a request with a user message and one tool.
func toolTurn(text string) llm.Request {
	r := userRequest(text)
	r.Tools = []llm.Tool{{Name: "read_file", Description: "reads", Parameters: []byte(`{"type":"object"}`)}}
	return r
}

// continueWith returns req followed by the reply and a result for each of
// its calls: the next request of a tool loop.
func continueWith(req llm.Request, reply transcript.Message) llm.Request {
	req.Messages = append(append([]transcript.Message(nil), req.Messages...), reply)
	for _, tc := range reply.ToolCalls {
		req.Messages = append(req.Messages, transcript.Message{Role: transcript.RoleTool, ToolCallID: tc.ID, Content: `{"content":"x"}`})
	}
	return req
}

// Each provider's reasoning state is read from its stream, kept on the
// message, and sent back so that the provider accepts the next call; the
// same history without it is refused with the provider's own message.
func TestReasoningRoundTripPerProvider(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider fakemodel.Provider
		model    string
		check    func(t *testing.T, m transcript.Message)
		refused  string // what the provider says when the state is dropped
	}{
		{"deepseek", fakemodel.DeepSeek, "deepseek-v4-flash", func(t *testing.T, m transcript.Message) {
			if m.ReasoningContent == "" || m.ReasoningField != "" {
				t.Errorf("reasoning %q field %q", m.ReasoningContent, m.ReasoningField)
			}
		}, "reasoning_content` in the thinking mode must be passed back"},
		{"openrouter", fakemodel.OpenRouter, "google/gemini-3-pro-preview", func(t *testing.T, m transcript.Message) {
			if m.ReasoningContent == "" || m.ReasoningField != "reasoning" || !strings.Contains(string(m.ReasoningDetails), `"reasoning.encrypted"`) {
				t.Errorf("reasoning %q field %q details %s", m.ReasoningContent, m.ReasoningField, m.ReasoningDetails)
			}
		}, "Provider returned error (Google AI Studio: {\"error\":{\"code\":400,\"message\":\"Function call is missing a thought_signature"},
		{"gemini", fakemodel.Gemini, "gemini-3-flash", func(t *testing.T, m transcript.Message) {
			if m.ToolCalls[0].ThoughtSignature == "" || m.ToolCalls[1].ThoughtSignature != "" {
				t.Errorf("signatures %q %q, want one on the first call only", m.ToolCalls[0].ThoughtSignature, m.ToolCalls[1].ThoughtSignature)
			}
		}, "Function call is missing a thought_signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakemodel.NewTB(t)
			s.SetProvider(tc.provider)
			s.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
				{Name: "read_file", Arguments: `{"path":"a"}`}, {Name: "read_file", Arguments: `{"path":"b"}`},
			}}, fakemodel.Reply{Text: "done"})
			c, _ := newClient(s, func(cfg *model.Config) { cfg.Model = tc.model })
			req := toolTurn("read a and b")
			var text deltas
			resp, err := c.Complete(context.Background(), req, text.on)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, resp.Message)
			if text.text() != "" {
				t.Errorf("reasoning reached the text: %q", text.text())
			}
			next := continueWith(req, resp.Message)
			if resp, err := c.Complete(context.Background(), next, nil); err != nil || resp.Message.Content != "done" {
				t.Fatalf("second call with the state sent back: %v", err)
			}
			// Dropped: refused with the provider's words.
			dropped := continueWith(req, resp.Message)
			dropped.Messages[1].DropReasoning()
			wantRefused(t, s, tc.provider, tc.model, dropped, tc.refused)
		})
	}
}

// wantRefused sends req (from a client for another model name, so that no
// placeholder stands in for the missing state, except for OpenRouter whose
// rule is the model's) and wants the provider's 400 with refused.
func wantRefused(t *testing.T, s *fakemodel.Server, p fakemodel.Provider, modelName string, req llm.Request, refused string) {
	t.Helper()
	if p != fakemodel.OpenRouter {
		modelName = "other-model"
	}
	other, _ := newClient(s, func(cfg *model.Config) { cfg.Model = modelName })
	_, err := other.Complete(context.Background(), req, nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Status != 400 || !strings.Contains(err.Error(), refused) {
		t.Fatalf("without the state: %v, want 400 %q", err, refused)
	}
}

// A call the runtime wrote (no reasoning of the model's) is accepted by
// DeepSeek and Gemini: an empty reasoning_content and Google's dummy
// signature stand in, chosen from the model name.
func TestRuntimeCallsAcceptedByThinkingProviders(t *testing.T) {
	for _, tc := range []struct {
		provider fakemodel.Provider
		model    string
	}{{fakemodel.DeepSeek, "deepseek-v4-pro"}, {fakemodel.Gemini, "gemini-3-pro-preview"}} {
		s := fakemodel.NewTB(t)
		s.SetProvider(tc.provider)
		s.Enqueue(fakemodel.Reply{Text: "ok"})
		c, _ := newClient(s, func(cfg *model.Config) { cfg.Model = tc.model })
		req := continueWith(toolTurn("go"), transcript.Message{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{
			{ID: "m8YTqb2Ka", Type: "function", Function: transcript.FunctionCall{Name: "read_file", Arguments: `{}`}}}})
		if _, err := c.Complete(context.Background(), req, nil); err != nil {
			t.Errorf("%s: %v", tc.provider, err)
		}
	}
}

// OpenRouter's keep-alive comments are skipped; its error chunk (error +
// finish_reason "error") before any text is retried, and after text it is
// an error that shows the upstream provider's own message; an "event:
// error" line is an error too; neither is ever a finished answer.
func TestStreamErrors(t *testing.T) {
	orErr := &fakemodel.StreamError{Code: 502, Message: "Provider returned error", Raw: `{"error":"upstream overloaded"}`, Provider: "DeepInfra"}

	s := fakemodel.NewTB(t)
	s.SetProvider(fakemodel.OpenRouter)
	s.Enqueue(fakemodel.Reply{Text: "never", KeepAlive: 3, StreamError: orErr}, fakemodel.Reply{Text: "second try", KeepAlive: 2})
	var retried error
	c, _ := newClient(s, func(cfg *model.Config) { cfg.OnRetry = func(_ int, err error) { retried = err } })
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil || resp.Message.Content != "second try" || resp.Tries != 2 {
		t.Fatalf("error chunk before text: resp %+v err %v, want retried", resp, err)
	}
	if retried == nil || !strings.Contains(retried.Error(), "Provider returned error (DeepInfra: {\"error\":\"upstream overloaded\"})") {
		t.Errorf("retry error %v, want the provider's raw message", retried)
	}

	// (4 reasoning deltas come first: OpenRouter's models think.)
	s.Enqueue(fakemodel.Reply{Text: "partial answer", Chunks: 4, StreamError: &fakemodel.StreamError{After: 4 + 2, Code: 502, Message: "Provider returned error", Raw: "timeout", Provider: "Groq"}})
	var got deltas
	resp, err = c.Complete(context.Background(), userRequest("hi"), got.on)
	var le *llm.Error
	if resp != nil || !errors.As(err, &le) || !le.Partial || !strings.Contains(err.Error(), "Groq: timeout") {
		t.Fatalf("error chunk after text: resp %+v err %v, want a partial error with the raw message", resp, err)
	}

	s2 := fakemodel.NewTB(t)
	s2.Enqueue(fakemodel.Reply{Text: "x", StreamError: &fakemodel.StreamError{Event: true, Message: "Overloaded"}}, fakemodel.Reply{Text: "after event"})
	c2, _ := newClient(s2, nil)
	resp, err = c2.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil || resp.Message.Content != "after event" || resp.Tries != 2 {
		t.Fatalf("event: error: resp %+v err %v, want retried", resp, err)
	}
	s2.Enqueue(fakemodel.Reply{Text: "abc", StreamError: &fakemodel.StreamError{After: 1, Event: true, Message: "Overloaded"}})
	if _, err = c2.Complete(context.Background(), userRequest("hi"), got.on); err == nil || !strings.Contains(err.Error(), "Overloaded") {
		t.Fatalf("event: error after text: %v", err)
	}
}

// A stream cut in the middle of tool-call arguments is an error, never a
// reply whose truncated arguments would run.
func TestCutToolCallIsNeverAnAnswer(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: `{"path":"a.md","content":"long text"}`}}, DropMidStream: true, DropAfter: 2},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: `{"path":"a.md","content":"long text"}`}}, DropMidStream: true, DropAfter: 2},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: `{"path":"a.md","content":"long text"}`}}, DropMidStream: true, DropAfter: 2})
	c, _ := newClient(s, nil)
	resp, err := c.Complete(context.Background(), toolTurn("save"), nil)
	if resp != nil || !(errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, model.ErrIncompleteStream)) || s.Calls() != 3 {
		t.Fatalf("resp %+v err %v calls %d, want every cut attempt retried and failed", resp, err, s.Calls())
	}
}

// Tool calls without an index, a reasoning field nobody knows, and
// reasoning in the default form all assemble; the unknown field is ignored.
func TestOddStreamShapes(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Reasoning: "thinking hard", UnknownReasoning: true, NoIndex: true, Text: "ok", ToolCalls: []fakemodel.ToolCall{
		{Name: "read_file", Arguments: `{"path":"a"}`}, {Name: "read_file", Arguments: `{"path":"b"}`}}})
	c, _ := newClient(s, nil)
	resp, err := c.Complete(context.Background(), toolTurn("x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := resp.Message
	if m.ReasoningContent != "thinking hard" || m.Content != "ok" || len(m.ToolCalls) != 2 || m.ToolCalls[1].Function.Arguments != `{"path":"b"}` {
		t.Fatalf("message %+v", m)
	}
}

// Mistral's ids come back as they are; Azure gets a current api-version by
// default, which takes stream_options, while an old one is refused with
// Azure's words.
func TestMistralAndAzureModes(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.SetProvider(fakemodel.Mistral)
	s.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: `{}`}}})
	c, _ := newClient(s, nil)
	resp, err := c.Complete(context.Background(), toolTurn("x"), nil)
	if err != nil || len(resp.Message.ToolCalls[0].ID) != 9 {
		t.Fatalf("mistral: %+v %v", resp, err)
	}
	bad := continueWith(toolTurn("x"), transcript.Message{Role: "assistant", ToolCalls: []transcript.ToolCall{{ID: "call_menu_3_0", Type: "function", Function: transcript.FunctionCall{Name: "read_file", Arguments: "{}"}}}})
	if _, err := c.Complete(context.Background(), bad, nil); err == nil || !strings.Contains(err.Error(), "must be a-z, A-Z, 0-9, with a length of 9") {
		t.Errorf("a long id sent to Mistral: %v", err)
	}

	az := fakemodel.NewTB(t)
	az.SetProvider(fakemodel.Azure)
	az.Enqueue(fakemodel.Reply{Text: "hi from azure"})
	// The api-version belongs to Azure's Chat Completions path; auto would
	// send a gpt-5 deployment to the Responses API, which needs none.
	c, _ = newClient(az, func(cfg *model.Config) {
		cfg.APIType, cfg.BaseURL, cfg.Model, cfg.API = "azure", az.RootURL(), "gpt-5-prod", model.APIChat
	})
	if resp, err := c.Complete(context.Background(), userRequest("hi"), nil); err != nil || resp.Message.Content != "hi from azure" {
		t.Fatalf("azure default api-version: %v", err)
	}
	if q := az.Requests()[0].Query; q != "api-version="+model.DefaultAzureAPIVersion {
		t.Errorf("query %q", q)
	}
	c, _ = newClient(az, func(cfg *model.Config) {
		cfg.APIType, cfg.BaseURL, cfg.Model, cfg.APIVersion, cfg.API = "azure", az.RootURL(), "gpt-5-prod", "2023-05-15", model.APIChat
	})
	if _, err := c.Complete(context.Background(), userRequest("hi"), nil); err == nil || !strings.Contains(err.Error(), "Unknown parameter: 'stream_options'") {
		t.Errorf("azure 2023-05-15: %v", err)
	}
}

// A chunk far longer than the reader's buffer (a whole document in one
// tool-call delta) arrives whole.
func TestLongStreamLines(t *testing.T) {
	s := fakemodel.NewTB(t)
	doc := strings.Repeat("lorem ipsum dolor ", 20000) // 360 KB
	s.Enqueue(fakemodel.Reply{Chunks: 1, ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: `{"path":"a.md","content":"` + doc + `"}`}}})
	c, _ := newClient(s, nil)
	resp, err := c.Complete(context.Background(), toolTurn("save"), nil)
	if err != nil || len(resp.Message.ToolCalls) != 1 || !strings.Contains(resp.Message.ToolCalls[0].Function.Arguments, doc) {
		t.Fatalf("err %v calls %d", err, len(resp.Message.ToolCalls))
	}
}
