package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// The wire types below spell the OpenAI chat completions format by hand, as
// the API sends it (omitted fields, null content, index on tool-call
// deltas), rather than reusing go-openai's types, so the real client is
// tested against the format and not against itself.

// wireChunk is one streamed chat.completion.chunk.
type wireChunk struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []wireChunkChoice `json:"choices"`
	Usage   *wireUsage        `json:"usage,omitempty"`
	// Error is OpenRouter's in-stream error (with finish_reason "error").
	Error *wireStreamError `json:"error,omitempty"`
}

// wireStreamError is an error object sent inside a stream.
type wireStreamError struct {
	Code     any            `json:"code"`
	Message  string         `json:"message"`
	Metadata *wireErrorMeta `json:"metadata,omitempty"`
}

type wireErrorMeta struct {
	Raw          string `json:"raw,omitempty"`
	ProviderName string `json:"provider_name,omitempty"`
}

type wireChunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []wireToolDelta `json:"tool_calls,omitempty"`
	// Reasoning, as DeepSeek and vLLM (reasoning_content) or OpenRouter
	// (reasoning and reasoning_details) stream it.
	ReasoningContent *string          `json:"reasoning_content,omitempty"`
	Reasoning        *string          `json:"reasoning,omitempty"`
	ReasoningDetails []map[string]any `json:"reasoning_details,omitempty"`
	// ReasoningSignature is a reasoning field no client knows (Reply's
	// UnknownReasoning), which clients must ignore.
	ReasoningSignature map[string]any `json:"reasoning_signature,omitempty"`
}

type wireToolDelta struct {
	// Index is nil for the servers that send whole calls without one.
	Index        *int         `json:"index,omitempty"`
	ID           string       `json:"id,omitempty"`
	Type         string       `json:"type,omitempty"`
	Function     wireFunction `json:"function"`
	ExtraContent *wireExtra   `json:"extra_content,omitempty"`
}

// wireExtra is Gemini's extension of a tool call
// (extra_content.google.thought_signature).
type wireExtra struct {
	Google wireGoogle `json:"google"`
}

type wireGoogle struct {
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireUsage struct {
	PromptTokens        int               `json:"prompt_tokens"`
	CompletionTokens    int               `json:"completion_tokens"`
	TotalTokens         int               `json:"total_tokens"`
	PromptTokensDetails wirePromptDetails `json:"prompt_tokens_details"`
}

type wirePromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// wireCompletion is a non-streamed chat.completion.
type wireCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   wireUsage    `json:"usage"`
}

type wireChoice struct {
	Index        int         `json:"index"`
	Message      wireMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type wireMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

// wireModels is the body of GET /v1/models.
type wireModels struct {
	Object string      `json:"object"`
	Data   []wireModel `json:"data"`
}

type wireModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// toWireUsage converts u.
func toWireUsage(u Usage) wireUsage {
	return wireUsage{
		PromptTokens:        u.Prompt,
		CompletionTokens:    u.Completion,
		TotalTokens:         u.Prompt + u.Completion,
		PromptTokensDetails: wirePromptDetails{CachedTokens: u.Cached},
	}
}

// defaultCallID names the i-th tool call of the n-th request.
func defaultCallID(n, i int) string { return fmt.Sprintf("call_%d_%d", n, i) }

// completionID names the reply to the n-th request.
func completionID(n int) string { return fmt.Sprintf("chatcmpl-fake-%d", n) }

// errorType is the OpenAI error type for an HTTP status.
func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == http.StatusUnauthorized:
		return "invalid_request_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// writeJSON writes v as a JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fakemodel: encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError writes an OpenAI-shaped error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	var c any // null unless given
	if code != "" {
		c = code
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": message,
		"type":    errorType(status),
		"param":   nil,
		"code":    c,
	}})
}
