package model_test

import (
	"context"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
)

// Each provider's documented context-length refusal, sent by the fake as
// that provider sends it, is a context-length error to the engine (so it
// compacts and retries), with the window when the body states one.
func TestContextErrorsOfEveryProvider(t *testing.T) {
	for _, tc := range []struct {
		provider, source string
		status           int
		body             string
		window           int
	}{
		{"openai", "mckaywrigley/chatbot-ui#102", 400,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 128000},
		{"azure", "same body and code as OpenAI", 400,
			`{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded","status":400}}`, 8192},
		{"anthropic", "anthropics/claude-code#62560", 400,
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 211180 tokens > 200000 maximum"},"request_id":"req_011"}`, 200000},
		{"gemini", "google-gemini/gemini-cli#4118 (the compat endpoint wraps it in a list)", 400,
			`[{"error":{"code":400,"message":"The input token count (132478) exceeds the maximum number of tokens allowed (131072).","status":"INVALID_ARGUMENT"}}]`, 131072},
		{"vllm", "vllm-project/vllm#20409", 400,
			`{"object":"error","message":"This model's maximum context length is 16384 tokens. However, you requested 19591 tokens (9591 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, 16384},
		{"llama.cpp", "ggml-org/llama.cpp#15780", 400,
			`{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`, 8192},
		{"lmstudio", "lmstudio-ai/lmstudio-bug-tracker#546", 400,
			`{"error":"Trying to keep the first 111490 tokens when context the overflows. However, the model is loaded with context length of only 32768 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`, 32768},
		{"ollama", "ollama/ollama#17889", 400,
			`{"error":{"message":"prompt too long; exceeded max context length by 3804 tokens","type":"api_error","param":null,"code":null}}`, 0},
		{"deepseek", "evalstate/fast-agent#621", 400,
			`{"error":{"message":"This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, 131072},
		{"mistral", "docs.mistral.ai/resources/known-limitations", 400,
			`{"object":"error","message":"Prompt contains 40000 tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null}`, 32768},
		{"groq", "thepersonalaicompany/amurex-backend#51", 400,
			`{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, 0},
		{"openrouter", "OpenRouter passes the upstream's words", 400,
			`{"error":{"message":"This endpoint's maximum context length is 65536 tokens. However, you requested about 70000 tokens.","code":400,"metadata":{"provider_name":null}}}`, 65536},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			s := fakemodel.NewTB(t)
			s.Enqueue(fakemodel.Reply{Status: tc.status, ErrorBody: tc.body})
			c, _ := newClient(s, nil)
			_, err := c.Complete(context.Background(), userRequest("hi"), nil)
			if !llm.IsContextLength(err) {
				t.Fatalf("%s (%s): %v is not a context-length error", tc.provider, tc.source, err)
			}
			n, ok := llm.ContextWindow(err)
			if n != tc.window || ok != (tc.window > 0) {
				t.Errorf("window = %d, %v; want %d", n, ok, tc.window)
			}
		})
	}
	// Other refusals are not context errors.
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Status: 400, ErrorBody: `{"object":"error","message":"Unexpected role 'user' after role 'tool'","type":"invalid_request_message_order","param":null,"code":"3230"}`})
	c, _ := newClient(s, nil)
	if _, err := c.Complete(context.Background(), userRequest("hi"), nil); err == nil || llm.IsContextLength(err) {
		t.Errorf("a role-order refusal: %v", err)
	}
}
