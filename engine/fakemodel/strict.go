package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/transcript"
)

// SetStrict makes the server validate every request's history as the
// strictest providers do, answering 400 to one that breaks a rule: a system
// message only first; every assistant tool call answered, by its id, before
// any other message; no tool message without a pending call of its id;
// tool calls with ids and non-empty names; arguments that are valid JSON
// objects. New servers are strict; SetStrict(false) turns it off for tests
// that send broken histories on purpose.
func (s *Server) SetStrict(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lenient = !on
}

// SetContextWindow makes the server answer 400 context_length_exceeded to
// a request whose estimated size (its body's bytes / 4) is over tokens; 0
// removes the limit.
func (s *Server) SetContextWindow(tokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window = tokens
}

// ValidateHistory checks messages against the strict rules of SetStrict and
// returns the first broken one, or nil.
func ValidateHistory(msgs []openai.ChatCompletionMessage) error {
	pending := map[string]bool{} // tool call ids awaiting results
	for i, m := range msgs {
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleDeveloper:
			if i != 0 {
				return fmt.Errorf("messages[%d]: a system message may only come first", i)
			}
		case openai.ChatMessageRoleTool:
			if m.ToolCallID == "" || !pending[m.ToolCallID] {
				return fmt.Errorf("messages[%d]: a tool message must answer a preceding tool call by its id (got %q)", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			continue
		case openai.ChatMessageRoleUser, openai.ChatMessageRoleAssistant:
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
		if len(pending) > 0 {
			return fmt.Errorf("messages[%d]: tool calls %v were not answered before this %s message", i, keys(pending), m.Role)
		}
		seen := map[string]bool{}
		for j, tc := range m.ToolCalls {
			if m.Role != openai.ChatMessageRoleAssistant {
				return fmt.Errorf("messages[%d]: only assistant messages carry tool calls", i)
			}
			if tc.ID == "" || seen[tc.ID] {
				return fmt.Errorf("messages[%d].tool_calls[%d]: missing or repeated id %q", i, j, tc.ID)
			}
			seen[tc.ID] = true
			if tc.Function.Name == "" {
				return fmt.Errorf("messages[%d].tool_calls[%d]: empty function name", i, j)
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(tc.Function.Arguments), &obj); err != nil {
				return fmt.Errorf("messages[%d].tool_calls[%d].function.arguments: invalid JSON: %v", i, j, err)
			}
			pending[tc.ID] = true
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("tool calls %v were not answered", keys(pending))
	}
	return nil
}

// checkRequest applies the strict rules and the context window to req; it
// writes the error answer and reports false when req is refused.
func (s *Server) checkRequest(w http.ResponseWriter, req Request) bool {
	s.mu.Lock()
	lenient, window := s.lenient, s.window
	s.mu.Unlock()
	if window > 0 && len(req.Raw)/4 > window {
		writeError(w, http.StatusBadRequest, "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", window, len(req.Raw)/4))
		return false
	}
	// OpenAI refuses more than 128 tools, with this error (vishalmysore/Tools4AI#16 and
	// julep-ai/julep#330 quote it whole).
	if n := len(req.Tools); n > 128 {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length %d instead.", n),
			"type":    "invalid_request_error", "param": "tools", "code": "array_above_max_length",
		}})
		return false
	}
	if !s.checkChatReasoning(w, req) {
		return false
	}
	if !lenient {
		if err := ValidateHistory(req.Messages); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "fakemodel (strict): "+err.Error())
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// ValidateTranscript is ValidateHistory for agentbot's own messages (a
// stored transcript).
func ValidateTranscript(msgs []transcript.Message) error {
	out := make([]openai.ChatCompletionMessage, len(msgs))
	for i, m := range msgs {
		out[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, Refusal: m.Refusal, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolType(tc.Type),
				Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
	}
	return ValidateHistory(out)
}
