// Package llm is the engine's model boundary: the request the loop sends,
// the reply it gets, the tools it offers and the errors a call ends with.
// Every wire adapter (engine/model) converts to and from these types at its
// edge, so the engine never sees a provider library's types.
package llm

import (
	"context"
	"encoding/json"

	"agentbot/engine/transcript"
)

// Model is what the loop needs of a model client.
type Model interface {
	// Complete sends one request, calling onText with each text delta of the
	// answer (onText may be nil), and returns the assembled reply. Errors
	// are *Error.
	Complete(ctx context.Context, req Request, onText func(delta string)) (*Response, error)
}

// Request is one model call.
type Request struct {
	// Messages is the conversation, system prompt first.
	Messages []transcript.Message
	// Tools are the tools the model may call; none means a text answer.
	Tools []Tool
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
