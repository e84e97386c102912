package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Provider is a provider mode of the server: it validates requests the way
// that provider does (refusing what it refuses, with its status and error
// shape) and answers with its stream shapes. Every rule cites where it
// comes from.
type Provider string

// The provider modes.
const (
	// OpenAI is the default: the OpenAI chat completions format.
	OpenAI Provider = ""
	// DeepSeek thinks by default and streams reasoning_content; an
	// assistant message with tool calls must carry its reasoning_content
	// back.
	DeepSeek Provider = "deepseek"
	// OpenRouter streams reasoning and reasoning_details, sends keep-alive
	// comments, and for Gemini 3 models needs reasoning_details back.
	OpenRouter Provider = "openrouter"
	// Gemini is Google's OpenAI-compatible endpoint: thought signatures on
	// tool calls, needed back on the calls of the current turn.
	Gemini Provider = "gemini"
	// Mistral needs 9-character tool-call ids and no user message right
	// after tool results.
	Mistral Provider = "mistral"
	// Azure needs the deployment path and an api-version; old api-versions
	// refuse stream_options.
	Azure Provider = "azure"
	// Groq answers a tool-call generation that failed with its
	// tool_use_failed error (Reply.FailedGeneration, groq.go).
	Groq Provider = "groq"
)

// SetProvider sets the server's provider mode.
func (s *Server) SetProvider(p Provider) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.provider = p
}

// refusal is a provider's error answer.
type refusal struct {
	status int
	body   string
}

// rawRequest is the part of a request body the provider rules read,
// decoded by hand: go-openai's types lack the reasoning fields.
type rawRequest struct {
	Model         string          `json:"model"`
	Messages      []rawMessage    `json:"messages"`
	StreamOptions json.RawMessage `json:"stream_options"`
	Thinking      *struct {
		Type string `json:"type"`
	} `json:"thinking"`
}

type rawMessage struct {
	Role             string          `json:"role"`
	ToolCalls        []rawToolCall   `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
	ReasoningContent *string         `json:"reasoning_content"`
	ReasoningDetails json.RawMessage `json:"reasoning_details"`
}

type rawToolCall struct {
	ID           string     `json:"id"`
	ExtraContent *wireExtra `json:"extra_content"`
}

// checkProvider applies the provider mode's request rules; it writes the
// refusal and reports false when req is refused.
func (s *Server) checkProvider(w http.ResponseWriter, req Request) bool {
	s.mu.Lock()
	p := s.provider
	s.mu.Unlock()
	var raw rawRequest
	if err := json.Unmarshal(req.Raw, &raw); err != nil {
		return true // the strict checks answer a bad body
	}
	var ref *refusal
	switch p {
	case DeepSeek:
		ref = checkDeepSeek(raw)
	case OpenRouter:
		ref = s.checkOpenRouter(raw)
	case Gemini:
		ref = s.checkGemini(raw)
	case Mistral:
		ref = checkMistral(raw)
	case Azure:
		ref = checkAzure(req, raw)
	}
	if ref == nil {
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ref.status)
	_, _ = w.Write([]byte(ref.body))
	return false
}

// thinks reports whether a provider mode reasons by default, so that a
// reply without Reasoning gets some.
func (p Provider) thinks() bool { return p == DeepSeek || p == OpenRouter }

// checkDeepSeek: in thinking mode (the default) "for turns that do perform
// tool calls, the reasoning_content must be fully passed back to the API in
// all subsequent requests. If your code does not correctly pass back
// reasoning_content, the API will return a 400 error"
// (https://api-docs.deepseek.com/guides/thinking_mode, quoted in
// anomalyco/opencode#24722); the error body is dataelement/Clawith#570's.
func checkDeepSeek(raw rawRequest) *refusal {
	if raw.Thinking != nil && raw.Thinking.Type == "disabled" {
		return nil
	}
	for _, m := range raw.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 && m.ReasoningContent == nil {
			return &refusal{http.StatusBadRequest, `{"error":{"message":"The ` + "`reasoning_content`" + ` in the thinking mode must be passed back to the API.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`}
		}
	}
	return nil
}

// currentTurn returns the messages after the last user message: the turn
// Gemini validates signatures in ("validation only applies to the current
// turn", https://ai.google.dev/gemini-api/docs/thought-signatures).
func currentTurn(msgs []rawMessage) []rawMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i+1:]
		}
	}
	return msgs
}

// checkOpenRouter: Gemini 3 models behind OpenRouter need the
// reasoning_details of an assistant message with tool calls sent back
// (https://openrouter.ai/docs/use-cases/reasoning-tokens#preserving-reasoning-blocks;
// RooCodeInc/Roo-Code#9506), else Google refuses and OpenRouter answers
// "Provider returned error" with Google's body in metadata.raw (issue 16;
// charmbracelet/crush#279 shows the shape).
func (s *Server) checkOpenRouter(raw rawRequest) *refusal {
	if !strings.Contains(strings.ToLower(raw.Model), "gemini-3") {
		return nil
	}
	for _, m := range currentTurn(raw.Messages) {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		var details []struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}
		_ = json.Unmarshal(m.ReasoningDetails, &details)
		ok := false
		for _, d := range details {
			ok = ok || d.Type == "reasoning.encrypted" && s.issuedSignature(d.Data)
		}
		if !ok {
			inner := `{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}`
			body, _ := json.Marshal(map[string]any{"error": map[string]any{
				"message": "Provider returned error", "code": 400,
				"metadata": map[string]any{"raw": inner, "provider_name": "Google AI Studio"},
			}})
			return &refusal{http.StatusBadRequest, string(body)}
		}
	}
	return nil
}

// dummySignatures are the values Google accepts for calls Gemini did not
// write (https://ai.google.dev/gemini-api/docs/thought-signatures).
var dummySignatures = map[string]bool{"skip_thought_signature_validator": true, "context_engineering_is_the_way_to_go": true}

// checkGemini: "you must pass back thought signatures during function
// calling, otherwise you will get a validation error (4xx status code)";
// in a step with parallel calls only the first carries one
// (https://ai.google.dev/gemini-api/docs/thought-signatures). The
// OpenAI-compatible endpoint answers errors as a list
// (google-gemini/gemini-cli#6678 shows the shape).
func (s *Server) checkGemini(raw rawRequest) *refusal {
	for _, m := range currentTurn(raw.Messages) {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		sig := ""
		if x := m.ToolCalls[0].ExtraContent; x != nil {
			sig = x.Google.ThoughtSignature
		}
		if !dummySignatures[sig] && !s.issuedSignature(sig) {
			return &refusal{http.StatusBadRequest, `[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance.","status":"INVALID_ARGUMENT"}}]`}
		}
	}
	return nil
}

// checkMistral: tool-call ids must be 9 characters of a-z, A-Z, 0-9
// (langchain-ai/langchain#24668, anomalyco/opencode#1680: 400 with this
// body), and a user message may not follow tool results
// (datapizza-labs/datapizza-ai#98, zed-industries/zed#37021).
func checkMistral(raw rawRequest) *refusal {
	bad := func(id string) *refusal {
		return &refusal{http.StatusBadRequest, fmt.Sprintf(`{"object":"error","message":"Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.","type":"invalid_request_error","param":null,"code":null}`, id)}
	}
	prev := ""
	for _, m := range raw.Messages {
		for _, tc := range m.ToolCalls {
			if !mistralID(tc.ID) {
				return bad(tc.ID)
			}
		}
		if m.Role == "tool" && !mistralID(m.ToolCallID) {
			return bad(m.ToolCallID)
		}
		if m.Role == "user" && prev == "tool" {
			return &refusal{http.StatusBadRequest, `{"object":"error","message":"Unexpected role 'user' after role 'tool'","type":"invalid_request_message_order","param":null,"code":"3230"}`}
		}
		prev = m.Role
	}
	return nil
}

// mistralID reports whether id is 9 characters of a-z, A-Z, 0-9.
func mistralID(id string) bool {
	if len(id) != 9 {
		return false
	}
	for _, c := range id {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// azureStreamOptionsSince is the first api-version that takes
// stream_options: 2024-08-01-preview lacks it
// (Azure/azure-rest-api-specs#30810), 2024-10-21 has it
// (griptape-ai/griptape#1640); 2023-05-15, go-openai's default, refuses it
// (openai/openai-python#1469) with agno-agi/agno#1066's body.
const azureStreamOptionsSince = "2024-09-01"

// checkAzure: the deployment path and an api-version are required; without
// one Azure answers 404 "Resource not found" (MicrosoftDocs/azure-docs#114602,
// ThinkInAIXYZ/deepchat#262).
func checkAzure(req Request, raw rawRequest) *refusal {
	version := ""
	if q, err := url.ParseQuery(req.Query); err == nil {
		version = q.Get("api-version")
	}
	if req.Deployment == "" || version == "" {
		return &refusal{http.StatusNotFound, `{"error":{"code":"404","message":"Resource not found"}}`}
	}
	if len(raw.StreamOptions) > 0 && string(raw.StreamOptions) != "null" && version < azureStreamOptionsSince {
		return &refusal{http.StatusBadRequest, `{"error":{"message":"Unknown parameter: 'stream_options'.","type":"invalid_request_error","param":"stream_options","code":"unknown_parameter"}}`}
	}
	return nil
}

// issueSignature records sig as one the server handed out.
func (s *Server) issueSignature(sig string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signatures == nil {
		s.signatures = map[string]bool{}
	}
	s.signatures[sig] = true
}

// issuedSignature reports whether the server handed out sig.
func (s *Server) issuedSignature(sig string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sig != "" && s.signatures[sig]
}
