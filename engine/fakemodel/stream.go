package fakemodel

import (
	"encoding/json"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// writeStream writes reply as server-sent events: a role chunk, the text
// deltas, the tool-call deltas (the first delta of a call carries its index,
// id, type and name; later ones its index and a piece of the arguments), a
// chunk with the finish reason, a usage chunk with empty choices when the
// request set stream_options.include_usage, and "data: [DONE]".
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, req Request, reply Reply) {
	calls := reply.toolCalls(req.N)
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
	send := func(choices []wireChunkChoice, usage *wireUsage) bool {
		c := base
		c.Choices, c.Usage = choices, usage
		body, err := json.Marshal(c)
		if err != nil {
			return false
		}
		if _, err := w.Write(append(append([]byte("data: "), body...), '\n', '\n')); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	empty := ""
	if !send([]wireChunkChoice{{Delta: wireDelta{Role: openai.ChatMessageRoleAssistant, Content: &empty}}}, nil) {
		return
	}
	deltas := streamDeltas(reply, calls)
	for i, d := range deltas {
		if reply.DropMidStream && i == reply.DropAfter {
			panic(http.ErrAbortHandler) // cut the connection mid-stream
		}
		if !s.wait(r.Context(), reply.ChunkDelay) {
			panic(http.ErrAbortHandler)
		}
		if !send([]wireChunkChoice{{Delta: d}}, nil) {
			return
		}
	}
	if reply.DropMidStream {
		panic(http.ErrAbortHandler) // DropAfter covers all deltas: cut before the finish
	}
	finish := reply.finishReason(calls)
	if !send([]wireChunkChoice{{Delta: wireDelta{}, FinishReason: &finish}}, nil) {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !reply.NoUsage {
		u := toWireUsage(reply.usage(req.Raw, calls))
		if !send([]wireChunkChoice{}, &u) {
			return
		}
	}
	if _, err := w.Write([]byte("data: [DONE]\n\n")); err == nil {
		_ = rc.Flush()
	}
}

// streamDeltas returns the delta chunks of reply: text pieces, then the
// tool calls, one after the other or round-robin with InterleaveTools.
func streamDeltas(reply Reply, calls []ToolCall) []wireDelta {
	var deltas []wireDelta
	for _, piece := range splitRunes(reply.text(), reply.chunks()) {
		deltas = append(deltas, wireDelta{Content: &piece})
	}
	perCall := make([][]wireDelta, len(calls))
	for i, c := range calls {
		perCall[i] = append(perCall[i], wireDelta{ToolCalls: []wireToolDelta{{
			Index: i, ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name},
		}}})
		for _, piece := range splitRunes(c.Arguments, reply.chunks()) {
			perCall[i] = append(perCall[i], wireDelta{ToolCalls: []wireToolDelta{{
				Index: i, Function: wireFunction{Arguments: piece},
			}}})
		}
	}
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
