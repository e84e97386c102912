package fakemodel

import "time"

// Reply scripts one answer of the fake model. The zero Reply is an empty
// assistant message (no text, no tool calls) with finish reason "stop".
type Reply struct {
	// Text is the assistant's content, streamed in Chunks deltas.
	Text string
	// ToolCalls are the tool calls of the answer, streamed after Text.
	ToolCalls []ToolCall

	// Status, when set to anything but 0 or 200, makes the reply an HTTP
	// error with that status, ErrorBody as its body and RetryAfter, when not
	// empty, as its Retry-After header.
	Status     int
	RetryAfter string
	// ErrorBody is sent verbatim with Status. Empty means an OpenAI-shaped
	// body: {"error":{"message":"fakemodel: scripted status N",...}}.
	ErrorBody string

	// Delay waits this long before answering. When the client gives up or
	// the server closes first, the reply is dropped and the connection cut.
	Delay time.Duration
	// ChunkDelay waits this long before each streamed delta chunk.
	ChunkDelay time.Duration

	// Usage is reported to the client. Zero Prompt and Completion counts are
	// estimated from the sizes of the request body and the reply (bytes/4).
	Usage Usage
	// NoUsage leaves usage out even when the request asked for it with
	// stream_options.include_usage (as some providers do).
	NoUsage bool

	// Chunks is the number of streamed deltas Text, and each tool call's
	// arguments, are split into (0 means 3). Splits fall on rune boundaries.
	Chunks int
	// InterleaveTools streams the deltas of parallel tool calls round-robin
	// (header of call 0, header of call 1, arguments piece of call 0, ...)
	// instead of one call after the other.
	InterleaveTools bool
	// FinishReason overrides the finish reason ("stop", or "tool_calls" when
	// there are tool calls).
	FinishReason string

	// Empty forces an empty answer (no content, no tool calls) even when
	// Text or ToolCalls are set.
	Empty bool
	// Hang never answers: the handler waits until the client gives up or
	// the server closes, then cuts the connection. Use it with a short
	// client timeout.
	Hang bool
	// DropMidStream cuts the connection in the middle of the answer: a
	// stream sends its first (role) chunk and then DropAfter delta chunks;
	// a non-stream answer sends half of its JSON body. The client sees an
	// unexpected EOF.
	DropMidStream bool
	// DropAfter is the number of delta chunks (text or tool call) sent
	// before a DropMidStream cut; 0 cuts before any content.
	DropAfter int

	// Reasoning is the model's reasoning, streamed before Text in the form
	// of the server's provider mode (SetProvider): reasoning_content by
	// default and for DeepSeek, reasoning and reasoning_details for
	// OpenRouter. Providers that think by default make one up when empty.
	Reasoning string
	// UnknownReasoning adds a reasoning field no client knows to the first
	// delta (providers add fields; clients must ignore them).
	UnknownReasoning bool
	// StreamError ends a streamed answer with an in-stream error.
	StreamError *StreamError
	// FailedGeneration is what the model wrote when its tool-call
	// generation failed: in Groq mode (SetProvider(Groq)) the answer is
	// Groq's tool_use_failed error carrying it as failed_generation,
	// inside the 200 stream, or as a 400 without streaming (groq.go).
	FailedGeneration string
	// NoIndex streams each tool call whole, in one delta without an index,
	// as some OpenAI-compatible servers do.
	NoIndex bool
	// KeepAlive sends this many SSE comment lines before the first chunk
	// (OpenRouter mode sends one unless set).
	KeepAlive int
}

// StreamError is an error inside a 200 stream, after After delta chunks.
type StreamError struct {
	After int
	// Event sends it as an "event: error" line with the error as data
	// (Anthropic-style SSE), instead of OpenRouter's error chunk with
	// finish_reason "error"
	// (https://openrouter.ai/docs/api-reference/streaming: "errors during
	// streaming").
	Event bool
	// Code is the error's code (OpenRouter sends the HTTP status it stands
	// for, e.g. 502); Message its message; Raw and Provider the upstream
	// provider's own error, as OpenRouter's metadata.raw and
	// metadata.provider_name.
	Code     any
	Message  string
	Raw      string
	Provider string
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	// ID defaults to "call_<request>_<index>".
	ID   string
	Name string
	// Arguments is sent as is; it may be malformed JSON on purpose.
	Arguments string
}

// Usage is the token usage a reply reports.
type Usage struct {
	Prompt     int
	Cached     int // prompt_tokens_details.cached_tokens
	Completion int
	// Reasoning is the part of Completion spent reasoning
	// (completion_tokens_details.reasoning_tokens); 0 on a reply that
	// streams reasoning: estimated from it and added to Completion.
	Reasoning int
}

// defaultChunks is the number of deltas a text is split into by default.
const defaultChunks = 3

// chunks returns the number of deltas per streamed string.
func (r Reply) chunks() int {
	if r.Chunks > 0 {
		return r.Chunks
	}
	return defaultChunks
}

// isError reports whether r is an HTTP error reply.
func (r Reply) isError() bool { return r.Status != 0 && r.Status != 200 }

// text returns the content actually sent.
func (r Reply) text() string {
	if r.Empty {
		return ""
	}
	return r.Text
}

// toolCalls returns the tool calls actually sent, with default IDs filled.
func (r Reply) toolCalls(requestN int) []ToolCall {
	if r.Empty || len(r.ToolCalls) == 0 {
		return nil
	}
	calls := make([]ToolCall, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		if c.ID == "" {
			c.ID = defaultCallID(requestN, i)
		}
		calls[i] = c
	}
	return calls
}

// finishReason returns the finish reason actually sent.
func (r Reply) finishReason(calls []ToolCall) string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(calls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

// usage returns the usage actually sent, estimating zero counts.
func (r Reply) usage(rawRequest []byte, calls []ToolCall) Usage {
	u := r.Usage
	if u.Prompt == 0 {
		u.Prompt = max(1, len(rawRequest)/4)
	}
	if u.Completion == 0 {
		n := len(r.text())
		for _, c := range calls {
			n += len(c.Name) + len(c.Arguments)
		}
		u.Completion = max(1, n/4)
	}
	return u
}

// splitRunes splits s into at most n pieces of about equal rune count,
// never inside a rune. An empty s yields no pieces.
func splitRunes(s string, n int) []string {
	runes := []rune(s)
	if len(runes) == 0 {
		return nil
	}
	n = max(1, min(n, len(runes)))
	pieces := make([]string, 0, n)
	for i := range n {
		lo, hi := i*len(runes)/n, (i+1)*len(runes)/n
		pieces = append(pieces, string(runes[lo:hi]))
	}
	return pieces
}
