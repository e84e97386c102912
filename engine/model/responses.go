package model

import (
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// The Responses API adapter. It runs stateless (store: false), so the
// transcript stays ours and any replica can continue a session: every call
// sends the whole conversation as input items, with the encrypted
// reasoning items the model returned before each of its answers, as OpenAI
// documents for stateless use ("include: reasoning.encrypted_content ...
// pass the reasoning items back in subsequent requests",
// https://platform.openai.com/docs/guides/reasoning#encrypted-reasoning-items).
//
// go-openai v1.43 has the request type and CreateResponseStream, but no
// input item types for reasoning items or function calls, and its
// ResponseOutputItem has no encrypted_content: the item types below, and
// the decoding of reasoning items from the event's raw JSON in
// responses_stream.go, fill that gap.

// rMessage is an input message item ("easy input message": string content).
type rMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// rReasoning is a reasoning input item, sent back as the model returned it.
// summary is required, even when empty.
type rReasoning struct {
	Type             string     `json:"type"`
	ID               string     `json:"id"`
	Summary          []rSummary `json:"summary"`
	EncryptedContent string     `json:"encrypted_content,omitempty"`
}

// rSummary is one part of a reasoning item's summary.
type rSummary struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// rFunctionCall is a function_call input item: a tool call of the model.
type rFunctionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// rFunctionOutput is a function_call_output input item: a tool's result.
type rFunctionOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// toResponsesInput converts transcript messages to Responses input items.
// An assistant message's reasoning items come first, then its text, then
// its function calls, the order the model produced them in; reasoning of a
// message with neither text nor calls is left out, since a reasoning item
// must be followed by the item it led to.
func toResponsesInput(msgs []transcript.Message) []any {
	items := make([]any, 0, len(msgs)+len(msgs)/2)
	for _, m := range msgs {
		switch m.Role {
		case transcript.RoleTool:
			items = append(items, rFunctionOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content})
		case transcript.RoleAssistant:
			items = appendAssistant(items, m)
		default:
			items = append(items, rMessage{Type: "message", Role: m.Role, Content: m.Content})
		}
	}
	return items
}

// appendAssistant appends the items of one assistant message.
func appendAssistant(items []any, m transcript.Message) []any {
	text := m.Content
	if text == "" {
		text = m.Refusal
	}
	if text == "" && len(m.ToolCalls) == 0 {
		return items
	}
	for _, r := range m.ReasoningItems {
		summary := make([]rSummary, len(r.Summary))
		for i, s := range r.Summary {
			summary[i] = rSummary{Type: "summary_text", Text: s}
		}
		items = append(items, rReasoning{Type: "reasoning", ID: r.ID, Summary: summary, EncryptedContent: r.EncryptedContent})
	}
	if text != "" {
		items = append(items, rMessage{Type: "message", Role: transcript.RoleAssistant, Content: text})
	}
	for _, tc := range m.ToolCalls {
		items = append(items, rFunctionCall{Type: "function_call", CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return items
}

// toResponsesTools converts tool definitions to Responses function tools
// (flat: type, name, description, parameters).
func toResponsesTools(tools []llm.Tool) []openai.ResponseTool {
	if len(tools) == 0 {
		return nil
	}
	out := make([]openai.ResponseTool, len(tools))
	for i, t := range tools {
		out[i] = openai.NewResponseFunctionTool(openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters),
		})
	}
	return out
}

// responsesRequest builds the Responses request for req.
func (c *Client) responsesRequest(req llm.Request) openai.CreateResponseRequest {
	store := false
	rreq := openai.CreateResponseRequest{
		Model:   c.cfg.Model,
		Input:   toResponsesInput(req.Messages),
		Store:   &store,
		Include: []openai.ResponseInclude{openai.ResponseIncludeReasoningEncryptedContent},
		Tools:   toResponsesTools(req.Tools),
	}
	effort := c.fam.effort(c.cfg.ReasoningEffort, APIResponses)
	if effort != "" {
		rreq.Reasoning = &openai.ResponseReasoning{Effort: effort}
	}
	if t := c.cfg.Temperature; t != nil && c.fam.samples(effort) {
		rreq.Temperature = t // a pointer: 0 is sent
	}
	if c.cfg.MaxTokens > 0 {
		rreq.MaxOutputTokens = c.cfg.MaxTokens
	}
	return rreq
}
