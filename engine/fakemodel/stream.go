package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// writeStream writes reply as server-sent events: keep-alive comments
// (OpenRouter: ": OPENROUTER PROCESSING", sent while a model works,
// https://openrouter.ai/docs/api-reference/streaming), a role chunk, the
// reasoning deltas in the provider mode's form, the text deltas, the
// tool-call deltas (the first delta of a call carries its index, id, type
// and name; later ones its index and a piece of the arguments), a chunk
// with the finish reason, a usage chunk with empty choices when the
// request set stream_options.include_usage, and "data: [DONE]". A
// StreamError replaces the rest of the stream after its deltas.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	s.mu.Lock()
	p := s.provider
	s.mu.Unlock()
	calls := providerCalls(p, req.N, reply.toolCalls(req.N), reply.ToolCalls)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	base := wireChunk{
		ID:      completionID(req.N),
		Object:  "chat.completion.chunk",
		Created: time.Now().Unix(),
		Model:   model(req),
	}
	write := func(b []byte) bool {
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	send := func(c wireChunk) bool {
		body, err := json.Marshal(c)
		if err != nil {
			return false
		}
		return write(append(append([]byte("data: "), body...), '\n', '\n'))
	}
	chunk := func(choices []wireChunkChoice, usage *wireUsage) wireChunk {
		c := base
		c.Choices, c.Usage = choices, usage
		return c
	}
	if !writeStart(p, reply, write, send, chunk) {
		return
	}
	deltas := s.streamDeltas(p, req, reply, calls)
	for i, d := range deltas {
		if se := reply.StreamError; se != nil && i == se.After {
			s.writeStreamError(write, send, chunk, *se)
			return
		}
		if reply.DropMidStream && i == reply.DropAfter {
			panic(http.ErrAbortHandler) // cut the connection mid-stream
		}
		if !s.wait(r.Context(), reply.ChunkDelay) || !send(chunk([]wireChunkChoice{{Delta: d}}, nil)) {
			panic(http.ErrAbortHandler)
		}
	}
	switch {
	case reply.StreamError != nil:
		s.writeStreamError(write, send, chunk, *reply.StreamError)
	case reply.DropMidStream:
		panic(http.ErrAbortHandler) // DropAfter covers all deltas: cut before the finish
	default:
		s.writeEnd(req, reply, calls, len(reasoningText(p, req.N, reply)), send, write, chunk)
	}
}

// writeStart writes what comes before a stream's deltas: the keep-alive
// comments and the role chunk; in Groq mode a failed generation ends the
// stream there with Groq's error (groq.go). It reports whether the
// stream goes on.
func writeStart(p Provider, reply Reply, write func([]byte) bool, send func(wireChunk) bool,
	chunk func([]wireChunkChoice, *wireUsage) wireChunk) bool {
	if !write([]byte(strings.Repeat(": OPENROUTER PROCESSING\n\n", keepAlives(p, reply)))) {
		return false
	}
	empty := ""
	if !send(chunk([]wireChunkChoice{{Delta: wireDelta{Role: openai.ChatMessageRoleAssistant, Content: &empty}}}, nil)) {
		return false
	}
	if reply.FailedGeneration != "" && p == Groq {
		write(groqToolUseFailed(reply.FailedGeneration).event())
		return false
	}
	return true
}

// keepAlives is the number of keep-alive comments before the first chunk.
func keepAlives(p Provider, reply Reply) int {
	if reply.KeepAlive == 0 && p == OpenRouter {
		return 1
	}
	return reply.KeepAlive
}

// writeEnd writes the finish chunk, the usage chunk when the request asked
// for it (with the reasoning tokens of reasoningBytes of reasoning, unless
// the script set them), and [DONE].
func (s *Server) writeEnd(req Request, reply Reply, calls []ToolCall, reasoningBytes int, send func(wireChunk) bool, write func([]byte) bool,
	chunk func([]wireChunkChoice, *wireUsage) wireChunk) {
	finish := reply.finishReason(calls)
	if !send(chunk([]wireChunkChoice{{Delta: wireDelta{}, FinishReason: &finish}}, nil)) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !reply.NoUsage {
		ru := s.usage(reply, req, calls)
		if ru.Reasoning == 0 && reasoningBytes > 0 {
			// Reasoning tokens are part of completion_tokens (OpenAI's
			// completion_tokens_details; DeepSeek reports them the same way).
			ru.Reasoning = max(1, reasoningBytes/4)
			ru.Completion += ru.Reasoning
		}
		u := toWireUsage(ru)
		if !send(chunk([]wireChunkChoice{}, &u)) {
			return
		}
	}
	write([]byte("data: [DONE]\n\n"))
}

// writeStreamError ends a stream with se: an "event: error" line whose data
// is an Anthropic-style error event
// (https://docs.anthropic.com/en/api/messages-streaming#error-events), or
// OpenRouter's chunk with an error object and finish_reason "error"
// (https://openrouter.ai/docs/api-reference/errors: "errors during
// streaming"). The stream then ends, without [DONE].
func (s *Server) writeStreamError(write func([]byte) bool, send func(wireChunk) bool,
	chunk func([]wireChunkChoice, *wireUsage) wireChunk, se StreamError) {
	if se.Event {
		body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": se.Message}})
		write(append(append([]byte("event: error\ndata: "), body...), '\n', '\n'))
		return
	}
	finish := "error"
	empty := ""
	c := chunk([]wireChunkChoice{{Delta: wireDelta{Content: &empty}, FinishReason: &finish}}, nil)
	c.Error = &wireStreamError{Code: se.Code, Message: se.Message}
	if se.Raw != "" || se.Provider != "" {
		c.Error.Metadata = &wireErrorMeta{Raw: se.Raw, ProviderName: se.Provider}
	}
	send(c)
}

// providerCalls gives the calls the ids the provider writes: Mistral's are
// 9 characters of a-z, A-Z, 0-9 (see checkMistral). Ids the script set
// are kept.
func providerCalls(p Provider, n int, calls, scripted []ToolCall) []ToolCall {
	if p != Mistral {
		return calls
	}
	for i := range calls {
		if scripted[i].ID == "" {
			calls[i].ID = fmt.Sprintf("M%02dx%05d", i%100, n%100000)
		}
	}
	return calls
}

// reasoningText is the reasoning a reply streams: its own, or, for
// providers that think by default, a made-up one.
func reasoningText(p Provider, n int, reply Reply) string {
	if reply.Reasoning == "" && p.thinks() && !reply.Empty {
		return fmt.Sprintf("The user asked something; request %d %s.", n, ReasoningMarker)
	}
	return reply.Reasoning
}

// streamDeltas returns the delta chunks of reply: reasoning pieces in the
// provider's form, text pieces, then the tool calls, one after the other
// or round-robin with InterleaveTools, or whole without index with NoIndex.
// Gemini puts a thought signature on the first call of a response;
// OpenRouter, for Gemini 3 models, an encrypted reasoning_details item.
func (s *Server) streamDeltas(p Provider, req Request, reply Reply, calls []ToolCall) []wireDelta {
	var deltas []wireDelta
	for _, piece := range splitRunes(reasoningText(p, req.N, reply), reply.chunks()) {
		switch p {
		case OpenRouter:
			deltas = append(deltas, wireDelta{Reasoning: &piece, ReasoningDetails: []map[string]any{
				{"type": "reasoning.text", "text": piece, "format": "unknown", "index": 0},
			}})
		case Gemini:
			// Gemini's thoughts stay hidden; only signatures travel.
		default:
			deltas = append(deltas, wireDelta{ReasoningContent: &piece})
		}
	}
	for _, piece := range splitRunes(reply.text(), reply.chunks()) {
		deltas = append(deltas, wireDelta{Content: &piece})
	}
	if len(calls) > 0 && p == OpenRouter && strings.Contains(strings.ToLower(model(req)), "gemini-3") {
		sig := fmt.Sprintf("or-sig-%d", req.N)
		s.issueSignature(sig)
		deltas = append(deltas, wireDelta{ReasoningDetails: []map[string]any{
			{"type": "reasoning.encrypted", "data": sig, "format": "google-gemini-v1", "index": 0},
		}})
	}
	deltas = append(deltas, s.toolDeltas(p, req.N, reply, calls)...)
	if reply.UnknownReasoning {
		if len(deltas) == 0 {
			deltas = append(deltas, wireDelta{})
		}
		deltas[0].ReasoningSignature = map[string]any{"format": "unknown-v9", "data": "b3BhcXVl"}
	}
	return deltas
}

// toolDeltas returns the deltas of the tool calls.
func (s *Server) toolDeltas(p Provider, n int, reply Reply, calls []ToolCall) []wireDelta {
	perCall := make([][]wireDelta, len(calls))
	for i, c := range calls {
		head := wireToolDelta{Index: &i, ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name}}
		if p == Gemini && i == 0 {
			sig := fmt.Sprintf("gemini-sig-%d", n)
			s.issueSignature(sig)
			head.ExtraContent = &wireExtra{Google: wireGoogle{ThoughtSignature: sig}}
		}
		if reply.NoIndex {
			head.Index, head.Function.Arguments = nil, c.Arguments
			perCall[i] = []wireDelta{{ToolCalls: []wireToolDelta{head}}}
			continue
		}
		perCall[i] = append(perCall[i], wireDelta{ToolCalls: []wireToolDelta{head}})
		for _, piece := range splitRunes(c.Arguments, reply.chunks()) {
			perCall[i] = append(perCall[i], wireDelta{ToolCalls: []wireToolDelta{{
				Index: &i, Function: wireFunction{Arguments: piece},
			}}})
		}
	}
	var deltas []wireDelta
	if !reply.InterleaveTools {
		for _, ds := range perCall {
			deltas = append(deltas, ds...)
		}
		return deltas
	}
	for step := 0; ; step++ {
		more := false
		for _, ds := range perCall {
			if step < len(ds) {
				deltas = append(deltas, ds[step])
				more = true
			}
		}
		if !more {
			return deltas
		}
	}
}
