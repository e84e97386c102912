package fakemodel

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// The Responses API endpoint: POST /v1/responses, and Azure's form POST
// /openai/v1/responses (Azure serves the Responses API on its v1 surface,
// the deployment as the model:
// https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/responses).
// Requests are recorded like chat ones: Request.Messages and Tools hold the
// input converted to chat form, Raw the body as sent. A reasoning model
// (OpenAI's gpt-5, gpt-6 and o-series names, and the names given to
// SetReasoningModels) answers with an encrypted reasoning item before its
// output, and checks that later requests send it back as OpenAI does.

// StreamFault scripts a failure inside a 200 Responses stream. Faults are
// taken in order, one per streamed Responses request; the zero StreamFault
// is no fault, letting one stream through.
type StreamFault struct {
	// Event is "error" (an error event, after which the stream ends) or
	// "response.failed".
	Event string
	// Code and Message are the error's (e.g. "server_error").
	Code    string
	Message string
	// AfterDeltas is the number of deltas (text or function arguments)
	// sent before the fault.
	AfterDeltas int
}

// SentReasoning is a reasoning item a request sent back.
type SentReasoning struct {
	ID               string
	EncryptedContent string
}

// responsesState is what the Responses endpoint remembers.
type responsesState struct {
	mu        sync.Mutex
	issued    map[string]string    // reasoning item id -> encrypted content
	callRS    map[string][2]string // call_id -> {function_call item id, reasoning item id}
	reasoners map[string]bool      // model or deployment names that reason
	faults    []StreamFault
	unknown   bool // add events and fields the client does not know
}

// responses returns the server's Responses state, creating it.
func (s *Server) responses() *responsesState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.resp == nil {
		s.resp = &responsesState{issued: map[string]string{}, callRS: map[string][2]string{}, reasoners: map[string]bool{}}
	}
	return s.resp
}

// routeResponses adds the Responses routes to mux.
func (s *Server) routeResponses(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/responses", s.serveResponses)
	mux.HandleFunc("POST /openai/v1/responses", s.serveResponses)
}

// SetReasoningModels makes the named models (Azure deployment names, say)
// behave as reasoning models on the Responses API, besides OpenAI's own
// reasoning model names.
func (s *Server) SetReasoningModels(names ...string) {
	st := s.responses()
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, n := range names {
		st.reasoners[n] = true
	}
}

// EnqueueStreamFault appends in-stream failures for the next streamed
// Responses requests.
func (s *Server) EnqueueStreamFault(faults ...StreamFault) {
	st := s.responses()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.faults = append(st.faults, faults...)
}

// SetUnknownReasoningFields makes Responses streams carry what a client
// cannot know yet: an event type of a future API version and an unknown
// field on reasoning items. A client must ignore both.
func (s *Server) SetUnknownReasoningFields(on bool) {
	st := s.responses()
	st.mu.Lock()
	defer st.mu.Unlock()
	st.unknown = on
}

// IssuedReasoning returns the reasoning items the server has returned so
// far: id -> encrypted content.
func (s *Server) IssuedReasoning() map[string]string {
	st := s.responses()
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make(map[string]string, len(st.issued))
	for k, v := range st.issued {
		out[k] = v
	}
	return out
}

// IsResponses reports whether r was a Responses API request.
func IsResponses(r Request) bool { return strings.HasSuffix(r.Path, "/responses") }

// ReasoningSent returns the reasoning items r sent back, in order.
func ReasoningSent(r Request) []SentReasoning {
	var body wireResponsesRequest
	if json.Unmarshal(r.Raw, &body) != nil {
		return nil
	}
	items, _ := decodeInput(body.Input)
	var out []SentReasoning
	for _, it := range items {
		if it.Type == "reasoning" {
			sr := SentReasoning{ID: it.ID}
			if it.EncryptedContent != nil {
				sr.EncryptedContent = *it.EncryptedContent
			}
			out = append(out, sr)
		}
	}
	return out
}

// reasons reports whether model is a reasoning model.
func (st *responsesState) reasons(model string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.reasonerLocked(model)
}

// nextFault takes the next scripted stream fault.
func (st *responsesState) nextFault() (StreamFault, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.faults) == 0 {
		return StreamFault{}, false
	}
	f := st.faults[0]
	st.faults = st.faults[1:]
	return f, true
}

// issue records a reasoning item and the calls it led to, returning its
// encrypted content.
func (st *responsesState) issue(rsID string, calls map[string]string) string {
	buf := make([]byte, 900)
	_, _ = rand.Read(buf)
	// Real encrypted content is an opaque Fernet-style token ("gAAAA...",
	// openai/codex#8145).
	enc := "gAAAAA" + base64.StdEncoding.EncodeToString(buf)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.issued[rsID] = enc
	for callID, fcID := range calls {
		st.callRS[callID] = [2]string{fcID, rsID}
	}
	return enc
}

// newID returns an OpenAI-style item id with prefix ("rs", "fc", "msg").
func newID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// serveResponses answers a Responses API request.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(io.LimitReader(r.Body, maxBody))
	var wr wireResponsesRequest
	decodeErr := readErr
	if decodeErr == nil {
		decodeErr = json.Unmarshal(body, &wr)
	}
	items, inputErr := decodeInput(wr.Input)
	req := Request{Raw: body, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
	req.Model, req.Stream = wr.Model, wr.Stream
	req.Messages, req.Tools = toChat(items, wr.Instructions), toChatTools(wr.Tools)
	req, key := s.record(req)
	if !authorized(r, key) {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "fakemodel: incorrect API key provided")
		return
	}
	if decodeErr != nil {
		writeError(w, http.StatusBadRequest, "", "fakemodel: bad request body: "+decodeErr.Error())
		return
	}
	if inputErr != nil {
		writeParamError(w, &respError{status: http.StatusBadRequest, param: "input", message: inputErr.Error()})
		return
	}
	if err := s.validateResponses(wr, items); err != nil {
		writeParamError(w, err)
		return
	}
	s.mu.Lock()
	window := s.window
	s.mu.Unlock()
	if window > 0 && len(body)/4 > window {
		writeError(w, http.StatusBadRequest, "context_length_exceeded", fmt.Sprintf(
			"Your input exceeds the context window of this model. This model's maximum context length is %d tokens.", window))
		return
	}
	s.answerResponses(w, r, req, wr)
}

// answerResponses sends the scripted reply to a valid request.
func (s *Server) answerResponses(w http.ResponseWriter, r *http.Request, req Request, wr wireResponsesRequest) {
	reply, ok := s.next(req)
	if !ok {
		writeError(w, http.StatusInternalServerError, "",
			fmt.Sprintf("fakemodel: no scripted reply for request %d (queue empty and no handler)", req.N))
		return
	}
	if !s.wait(r.Context(), reply.Delay) {
		panic(http.ErrAbortHandler)
	}
	switch {
	case reply.Hang:
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		panic(http.ErrAbortHandler)
	case reply.isError():
		s.writeScriptedError(w, reply)
	case wr.Stream:
		s.writeResponsesStream(w, r, req, wr, reply)
	default:
		out := s.buildResponse(req, wr, reply)
		out.obj.Status = "completed"
		writeJSON(w, http.StatusOK, out.obj)
	}
}

// respError is a refusal with OpenAI's error shape.
type respError struct {
	status  int
	code    string
	param   string
	message string
}

func (e *respError) Error() string { return e.message }

// writeParamError writes e as {"error":{message,type,param,code}}.
func writeParamError(w http.ResponseWriter, e *respError) {
	var code, param any
	if e.code != "" {
		code = e.code
	}
	if e.param != "" {
		param = e.param
	}
	writeJSON(w, e.status, map[string]any{"error": map[string]any{
		"message": e.message, "type": errorType(e.status), "param": param, "code": code,
	}})
}
