package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// builtResponse is the output of one reply, with its response object.
type builtResponse struct {
	obj       wireRespObject
	reasoning *wireRespOutItem // nil for a model without reasoning
	message   *wireRespOutItem // nil without text
	calls     []wireRespOutItem
}

// buildResponse builds the output items of reply: a reasoning item first
// for a reasoning model (with its encrypted content when the request is
// stateless or includes reasoning.encrypted_content: "For stateless
// requests when store: false is used, the API returns encrypted_content
// automatically", https://community.openai.com/t/1386738), then the
// message, then the function calls.
func (s *Server) buildResponse(req Request, wr wireResponsesRequest, reply Reply) builtResponse {
	st := s.responses()
	calls := reply.toolCalls(req.N)
	var b builtResponse
	fcIDs := map[string]string{}
	for _, c := range calls {
		args := c.Arguments
		fcID := newID("fc")
		fcIDs[c.ID] = fcID
		b.calls = append(b.calls, wireRespOutItem{ID: fcID, Type: "function_call", Status: "completed",
			CallID: c.ID, Name: c.Name, Arguments: &args})
	}
	if st.reasons(wr.Model) {
		rs := wireRespOutItem{ID: newID("rs"), Type: "reasoning", Summary: []wireRespContent{}}
		enc := st.issue(rs.ID, fcIDs)
		stateless := wr.Store != nil && !*wr.Store
		if stateless || slices.Contains(wr.Include, "reasoning.encrypted_content") {
			rs.EncryptedContent = enc
		}
		b.reasoning = &rs
	}
	if text := reply.text(); text != "" {
		b.message = &wireRespOutItem{ID: newID("msg"), Type: "message", Status: "completed", Role: "assistant",
			Content: []wireRespContent{{Type: "output_text", Text: text, Annotations: []any{}}}}
	}
	b.obj = wireRespObject{ID: fmt.Sprintf("resp_fake_%d", req.N), Object: "response", CreatedAt: time.Now().Unix(),
		Status: "in_progress", Model: model(req), Output: []wireRespOutItem{}, Store: wr.Store == nil || *wr.Store}
	u := reply.usage(req.Raw, calls)
	usage := &wireRespUsage{InputTokens: u.Prompt, OutputTokens: u.Completion}
	usage.InputTokensDetails.CachedTokens = u.Cached
	if b.reasoning != nil {
		usage.OutputTokensDetails.ReasoningTokens = 64
		usage.OutputTokens += 64
	}
	usage.TotalTokens = usage.InputTokens + usage.OutputTokens
	for _, it := range b.items() {
		b.obj.Output = append(b.obj.Output, it)
	}
	if reply.NoUsage {
		usage = nil
	}
	b.obj.Usage = usage
	return b
}

// items returns the output items in order.
func (b builtResponse) items() []wireRespOutItem {
	var out []wireRespOutItem
	if b.reasoning != nil {
		out = append(out, *b.reasoning)
	}
	if b.message != nil {
		out = append(out, *b.message)
	}
	return append(out, b.calls...)
}

// respStream writes the server-sent events of one Responses stream: each
// "event: <type>" and "data: <json>" with the type and a rising
// sequence_number in the data, as the streaming reference shows
// (https://platform.openai.com/docs/api-reference/responses-streaming).
type respStream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	seq int
}

// send writes one event; false means the client is gone.
func (rs *respStream) send(typ string, fields map[string]any) bool {
	fields["type"] = typ
	fields["sequence_number"] = rs.seq
	rs.seq++
	body, err := json.Marshal(fields)
	if err != nil {
		return false
	}
	if _, err := fmt.Fprintf(rs.w, "event: %s\ndata: %s\n\n", typ, body); err != nil {
		return false
	}
	return rs.rc.Flush() == nil
}

// writeResponsesStream streams reply: response.created and
// response.in_progress; per output item output_item.added, its deltas
// (reasoning: none; message: content_part.added, output_text.delta...,
// output_text.done, content_part.done; function call:
// function_call_arguments.delta..., function_call_arguments.done) and
// output_item.done; then response.completed with usage, or
// response.incomplete for FinishReason "length". A scripted StreamFault
// replaces the rest of the stream with an error or response.failed event;
// DropMidStream cuts the connection after DropAfter deltas.
func (s *Server) writeResponsesStream(w http.ResponseWriter, r *http.Request, req Request, wr wireResponsesRequest, reply Reply) {
	b := s.buildResponse(req, wr, reply)
	fault, hasFault := s.responses().nextFault()
	hasFault = hasFault && fault.Event != "" // the zero fault lets one stream through
	st := s.responses()
	st.mu.Lock()
	unknown := st.unknown
	st.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rs := &respStream{w: w, rc: http.NewResponseController(w)}
	final := b.obj
	created := b.obj
	created.Output, created.Usage = []wireRespOutItem{}, nil
	if !rs.send("response.created", map[string]any{"response": created}) ||
		!rs.send("response.in_progress", map[string]any{"response": created}) {
		return
	}
	deltas := 0
	step := func() bool { // before each delta: faults, cuts, pacing
		if hasFault && fault.AfterDeltas == deltas {
			s.writeFault(rs, final, fault)
			return false
		}
		if reply.DropMidStream && deltas == reply.DropAfter {
			panic(http.ErrAbortHandler)
		}
		deltas++
		return s.wait(r.Context(), reply.ChunkDelay)
	}
	for i, it := range b.items() {
		if !s.streamItem(rs, i, it, reply, unknown, step) {
			return
		}
	}
	if hasFault || reply.DropMidStream {
		if hasFault {
			s.writeFault(rs, final, fault)
			return
		}
		panic(http.ErrAbortHandler)
	}
	final.Status = "completed"
	end := "response.completed"
	if reply.FinishReason == "length" {
		final.Status, end = "incomplete", "response.incomplete"
		final.IncompleteDetails = &wireRespIncomplete{Reason: "max_output_tokens"}
	}
	rs.send(end, map[string]any{"response": final})
}

// streamItem streams one output item at output index i.
func (s *Server) streamItem(rs *respStream, i int, it wireRespOutItem, reply Reply, unknown bool, step func() bool) bool {
	added, it := addedForm(it, unknown)
	if !rs.send("response.output_item.added", map[string]any{"output_index": i, "item": added}) {
		return false
	}
	if it.Type == "reasoning" && unknown &&
		!rs.send("response.reasoning_trace.delta", map[string]any{"output_index": i, "item_id": it.ID, "delta": "…", "trace_format": 3}) {
		return false
	}
	switch it.Type {
	case "message":
		if !s.streamText(rs, i, it, reply, step) {
			return false
		}
	case "function_call":
		if !streamArgs(rs, i, it, reply, step) {
			return false
		}
	}
	return rs.send("response.output_item.done", map[string]any{"output_index": i, "item": it})
}

// addedForm returns an item as output_item.added shows it (no content
// yet), and the item as done, with unknown fields when asked.
func addedForm(it wireRespOutItem, unknown bool) (added, done wireRespOutItem) {
	added = it
	switch it.Type {
	case "message":
		added.Content, added.Status = []wireRespContent{}, "in_progress"
	case "function_call":
		empty := ""
		added.Arguments, added.Status = &empty, "in_progress"
	case "reasoning":
		added.EncryptedContent = ""
		if unknown {
			// A field this client cannot know.
			it.Extra = map[string]any{"format": "future-format-v9", "signature": "c2ln"}
		}
	}
	return added, it
}

// streamArgs streams a function call's arguments.
func streamArgs(rs *respStream, i int, it wireRespOutItem, reply Reply, step func() bool) bool {
	for _, piece := range splitRunes(*it.Arguments, reply.chunks()) {
		if !step() || !rs.send("response.function_call_arguments.delta",
			map[string]any{"output_index": i, "item_id": it.ID, "delta": piece}) {
			return false
		}
	}
	return rs.send("response.function_call_arguments.done",
		map[string]any{"output_index": i, "item_id": it.ID, "arguments": *it.Arguments})
}

// streamText streams a message item's text part.
func (s *Server) streamText(rs *respStream, i int, it wireRespOutItem, reply Reply, step func() bool) bool {
	text := it.Content[0].Text
	part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
	if !rs.send("response.content_part.added", map[string]any{"output_index": i, "item_id": it.ID, "content_index": 0, "part": part}) {
		return false
	}
	for _, piece := range splitRunes(text, reply.chunks()) {
		if !step() || !rs.send("response.output_text.delta",
			map[string]any{"output_index": i, "item_id": it.ID, "content_index": 0, "delta": piece, "logprobs": []any{}}) {
			return false
		}
	}
	part["text"] = text
	return rs.send("response.output_text.done", map[string]any{"output_index": i, "item_id": it.ID, "content_index": 0, "text": text}) &&
		rs.send("response.content_part.done", map[string]any{"output_index": i, "item_id": it.ID, "content_index": 0, "part": part})
}

// writeFault ends a stream with a scripted failure: an error event
// ({"type":"error","code","message","param"}, the ResponseErrorEvent of
// the streaming reference; llamastack/llama-stack#5224), or
// response.failed with the response's error
// (https://platform.openai.com/docs/api-reference/responses-streaming/response/failed).
func (s *Server) writeFault(rs *respStream, final wireRespObject, f StreamFault) {
	if f.Event == "response.failed" {
		final.Status, final.Usage = "failed", nil
		final.Error = &wireRespError{Code: f.Code, Message: f.Message}
		rs.send("response.failed", map[string]any{"response": final})
		return
	}
	rs.send("error", map[string]any{"code": f.Code, "message": f.Message, "param": nil})
}
