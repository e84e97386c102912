package fakemodel

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

// The Responses API wire types, spelled by hand as OpenAI documents them
// (https://platform.openai.com/docs/api-reference/responses/create and
// .../responses-streaming), not taken from go-openai, so the client is
// tested against the format rather than against itself.

// wireResponsesRequest is the part of a POST /v1/responses body the fake
// reads.
type wireResponsesRequest struct {
	Model           string          `json:"model"`
	Input           json.RawMessage `json:"input"`
	Instructions    string          `json:"instructions"`
	Tools           []wireRespTool  `json:"tools"`
	Stream          bool            `json:"stream"`
	Store           *bool           `json:"store"`
	Include         []string        `json:"include"`
	Reasoning       *wireRespEffort `json:"reasoning"`
	Temperature     *float64        `json:"temperature"`
	MaxOutputTokens *int            `json:"max_output_tokens"`
	PreviousID      string          `json:"previous_response_id"`
}

type wireRespEffort struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// wireRespTool is a function tool of the Responses API: flat, not nested
// under "function" as in Chat Completions.
type wireRespTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Function    json.RawMessage `json:"function,omitempty"` // the Chat Completions shape, refused
}

// wireRespInItem is one input item; Content is a string or a list of parts.
type wireRespInItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id,omitempty"`
	Role             string          `json:"role,omitempty"`
	Content          json.RawMessage `json:"content,omitempty"`
	CallID           string          `json:"call_id,omitempty"`
	Name             string          `json:"name,omitempty"`
	Arguments        string          `json:"arguments,omitempty"`
	Output           json.RawMessage `json:"output,omitempty"`
	Summary          json.RawMessage `json:"summary,omitempty"`
	EncryptedContent *string         `json:"encrypted_content,omitempty"`
}

// text returns an item's content as text: a string, or the text of its
// parts.
func (it wireRespInItem) text() string {
	return contentText(it.Content)
}

// contentText reads a string or a list of {type, text} parts.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	out := ""
	for _, p := range parts {
		out += p.Text
	}
	return out
}

// wireRespObject is the response object of the stream's lifecycle events.
type wireRespObject struct {
	ID                string              `json:"id"`
	Object            string              `json:"object"`
	CreatedAt         int64               `json:"created_at"`
	Status            string              `json:"status"`
	Model             string              `json:"model"`
	Output            []wireRespOutItem   `json:"output"`
	Error             *wireRespError      `json:"error"`
	IncompleteDetails *wireRespIncomplete `json:"incomplete_details"`
	Usage             *wireRespUsage      `json:"usage"`
	Store             bool                `json:"store"`
}

type wireRespError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type wireRespIncomplete struct {
	Reason string `json:"reason"`
}

// wireRespOutItem is an output item: a message, a function call or a
// reasoning item.
type wireRespOutItem struct {
	ID               string            `json:"id"`
	Type             string            `json:"type"`
	Status           string            `json:"status,omitempty"`
	Role             string            `json:"role,omitempty"`
	Content          []wireRespContent `json:"content,omitempty"`
	CallID           string            `json:"call_id,omitempty"`
	Name             string            `json:"name,omitempty"`
	Arguments        *string           `json:"arguments,omitempty"`
	Summary          []wireRespContent `json:"summary,omitempty"`
	EncryptedContent string            `json:"encrypted_content,omitempty"`
	// Extra is an unknown field some servers add to reasoning items.
	Extra map[string]any `json:"reasoning_details,omitempty"`
}

type wireRespContent struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations,omitempty"`
}

type wireRespUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// toChat converts Responses input items to chat messages, so handlers and
// tests read a Responses request as they read a chat one: messages keep
// their role, function calls join the assistant message before them, and
// function call outputs become tool messages. Reasoning items are left
// out (read them with ReasoningSent).
func toChat(items []wireRespInItem, instructions string) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	if instructions != "" {
		out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: instructions})
	}
	for _, it := range items {
		switch it.Type {
		case "", "message":
			out = append(out, openai.ChatCompletionMessage{Role: it.Role, Content: it.text()})
		case "function_call":
			call := openai.ToolCall{ID: it.CallID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: it.Name, Arguments: it.Arguments}}
			if n := len(out); n > 0 && out[n-1].Role == openai.ChatMessageRoleAssistant {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, call)
			} else {
				out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{call}})
			}
		case "function_call_output":
			out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: it.CallID, Content: contentText(it.Output)})
		}
	}
	return out
}

// toChatTools converts Responses function tools to chat tools.
func toChatTools(tools []wireRespTool) []openai.Tool {
	var out []openai.Tool
	for _, t := range tools {
		out = append(out, openai.Tool{Type: openai.ToolType(t.Type), Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters,
		}})
	}
	return out
}

// decodeInput reads the input: a string (one user message) or a list of
// items.
func decodeInput(raw json.RawMessage) ([]wireRespInItem, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("Missing required parameter: 'input'.")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		content, _ := json.Marshal(s)
		return []wireRespInItem{{Type: "message", Role: "user", Content: content}}, nil
	}
	var items []wireRespInItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("Invalid type for 'input': expected a string or an array of input items.")
	}
	return items, nil
}
