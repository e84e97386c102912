// Package llm is the engine's model boundary: the request the loop sends,
// the reply it gets, the tools it offers and the errors a call ends with.
// Every wire adapter (engine/model) converts to and from these types at its
// edge, so the engine never sees a provider library's types.
package llm

import (
	"encoding/json"

	"agentbot/engine/transcript"
)

// Request is one model call.
type Request struct {
	// Messages is the conversation, system prompt first.
	Messages []transcript.Message
	// Tools are the tools the model may call; none means a text answer.
	Tools []Tool
	// OnReasoning, when set, is called as the model reasons (a reasoning
	// delta, a reasoning item starting), never with the reasoning itself:
	// it lets the caller show that the model is thinking. Calls come from
	// the goroutine that runs Complete, in stream order with onText.
	OnReasoning func()
}

// Tool is one tool the model may call: its name, what it does, and the
// JSON Schema of its arguments.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Usage counts the tokens of one call (Calls is left 0).
type Usage = transcript.Usage

// Response is the assembled reply of one call.
type Response struct {
	// Message is the assistant message, tool calls included.
	Message transcript.Message
	// FinishReason is why the model stopped ("stop", "tool_calls",
	// "length", ...), as the provider said it.
	FinishReason string
	// Usage is what the provider reported for the call.
	Usage Usage
	// Tries is the number of attempts the call took.
	Tries int
}
