// Package fakemodel is a local OpenAI-compatible chat completions server for
// tests, in the manner of net/http/httptest. Tests script its replies
// (text, tool calls, HTTP errors, latency, hangs, cut connections), point the
// real go-openai client at URL(), and inspect the requests it recorded.
//
//	s := fakemodel.NewTB(t)
//	s.Enqueue(fakemodel.Reply{Text: "Hello"})
//	cfg := openai.DefaultConfig("key")
//	cfg.BaseURL = s.URL()
//
// It serves POST /v1/chat/completions (streamed as server-sent events when
// the request says stream=true, as one JSON body otherwise), the Azure form
// POST /openai/deployments/{deployment}/chat/completions, and GET /v1/models
// (and /openai/models). Scripted replies are served first, in order; when
// none is left, the handler set with Handle answers; with neither, the
// request fails with status 500 and "fakemodel: no scripted reply".
//
// SetProvider switches it to a provider's behaviour (DeepSeek, OpenRouter,
// Gemini, Mistral, Azure; provider.go): requests are validated as that
// provider does, and answers take its stream shapes. Setups lists the
// modes as users set them up, for tests that run one scenario on each.
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// maxBody bounds a request body the server reads.
const maxBody = 64 << 20

// DefaultModel is the model id GET /v1/models lists unless SetModels is used.
const DefaultModel = "fake-model"

// Server is a fake OpenAI-compatible server. Its methods are safe for
// concurrent use.
type Server struct {
	srv       *httptest.Server
	done      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	queue   []Reply
	handler func(Request) Reply
	reqs    []Request
	key     string
	models  []string
	lenient bool // strict history checks are off
	// unlisted: requests naming a model SetModels does not list are
	// refused (RefuseUnknownModels).
	unlisted bool
	window   int // context window in estimated tokens; 0: none
	// truncate is the context Ollama-style silent truncation keeps
	// (TruncateContext); 0: none.
	truncate int
	resp     *responsesState

	provider   Provider        // the provider mode (provider.go)
	signatures map[string]bool // thought signatures handed out
}

// Request is one recorded chat completion request.
type Request struct {
	// ChatCompletionRequest is the decoded body.
	openai.ChatCompletionRequest
	// Raw is the body as received.
	Raw []byte
	// N is the 1-based number of the request in arrival order.
	N int
	// Path and Query are the request URL's path and raw query.
	Path  string
	Query string
	// Deployment is the Azure deployment named in the path, if any.
	Deployment string
	// Header is a copy of the request headers.
	Header http.Header
}

// LastUserText returns the text of the last user message, or "" when there
// is none. Handlers use it to answer what was asked.
func (r Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		if m.Content != "" || len(m.MultiContent) == 0 {
			return m.Content
		}
		var b strings.Builder
		for _, p := range m.MultiContent {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// New starts a server. Close it when done.
func New() *Server {
	s := &Server{done: make(chan struct{}), models: []string{DefaultModel}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serveChat)
	mux.HandleFunc("POST /openai/deployments/{deployment}/chat/completions", s.serveChat)
	s.routeResponses(mux)
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("GET /openai/models", s.serveModels)
	mux.HandleFunc("GET /v1/models/{model}", s.serveModel)
	mux.HandleFunc("/", serveNotFound)
	s.srv = httptest.NewServer(mux)
	return s
}

// NewTB starts a server that is closed when tb's test ends.
func NewTB(tb testing.TB) *Server {
	tb.Helper()
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// URL returns the OpenAI-style base URL, ending in /v1, for
// openai.ClientConfig.BaseURL.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// RootURL returns the server's root URL, the BaseURL for an Azure config
// (openai.DefaultAzureConfig), whose paths start with /openai.
func (s *Server) RootURL() string { return s.srv.URL }

// ClientConfig returns a go-openai config pointing at the server with a
// fixed fake API key.
func (s *Server) ClientConfig() openai.ClientConfig {
	cfg := openai.DefaultConfig("fake-key")
	cfg.BaseURL = s.URL()
	return cfg
}

// Close shuts the server down. Hanging and delayed replies are released.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// Enqueue appends scripted replies; each request takes the first one left.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Handle sets fn to answer requests when no scripted reply is left (nil
// removes it). fn runs concurrently for concurrent requests.
func (s *Server) Handle(fn func(req Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
}

// RequireKey makes the server answer 401 to requests that do not carry key
// as "Authorization: Bearer <key>" or "api-key: <key>". Empty accepts any.
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// SetModels sets the model ids GET /v1/models lists.
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// RefuseUnknownModels makes the server refuse a request for a model that
// GET /v1/models does not list, as OpenAI does: 404 with code
// model_not_found and "The model `x` does not exist or you do not have
// access to it." (openai/openai-python#1396 and many reports quote it).
func (s *Server) RefuseUnknownModels() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlisted = true
}

// admit records req and refuses it when it lacks the key, its body did
// not decode or it names a model the server refuses; ok means it may be
// answered.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, req Request, decodeErr error) (Request, bool) {
	req, key := s.record(req)
	if !authorized(r, key) {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "fakemodel: incorrect API key provided")
		return req, false
	}
	if decodeErr != nil {
		writeError(w, http.StatusBadRequest, "", "fakemodel: bad request body: "+decodeErr.Error())
		return req, false
	}
	return req, s.knownModel(w, req)
}

// listed returns the models the server lists, or refuses a request
// without the key.
func (s *Server) listed(w http.ResponseWriter, r *http.Request) ([]string, bool) {
	s.mu.Lock()
	key, ids := s.key, append([]string(nil), s.models...)
	s.mu.Unlock()
	if !authorized(r, key) {
		writeError(w, http.StatusUnauthorized, "invalid_api_key", "fakemodel: incorrect API key provided")
		return nil, false
	}
	return ids, true
}

// knownModel refuses a request for an unlisted model, when asked to.
func (s *Server) knownModel(w http.ResponseWriter, req Request) bool {
	s.mu.Lock()
	refuse, ids := s.unlisted, s.models
	s.mu.Unlock()
	if !refuse || req.Model == "" || slices.Contains(ids, req.Model) || (len(ids) == 0 && req.Model == DefaultModel) {
		return true
	}
	writeError(w, http.StatusNotFound, "model_not_found",
		fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model))
	return false
}

// TruncateContext makes the server behave as Ollama does with a prompt
// longer than its context length n: it answers (status 200) but reads only
// part of the prompt, and reports what it read, n/2 tokens, as
// prompt_tokens. Ollama keeps half of its context for the prompt when it
// truncates (ollama/ollama#17427: "only enough tokens to fill half of the
// buffer are used"), with a default context of 4096 tokens under 24 GiB
// of VRAM (https://docs.ollama.com/context-length). Prompts are measured
// as bytes/4. 0 turns it off.
func (s *Server) TruncateContext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncate = n
}

// usage is the usage a reply reports to req: the script's, estimated where
// it is zero, with the prompt a truncating server read.
func (s *Server) usage(reply Reply, req Request, calls []ToolCall) Usage {
	u := reply.usage(req.Raw, calls)
	s.mu.Lock()
	n := s.truncate
	s.mu.Unlock()
	if n > 0 && len(req.Raw)/4 > n && reply.Usage.Prompt == 0 {
		u.Prompt = n / 2
	}
	return u
}

// InsufficientQuotaBody is OpenAI's body for an account out of quota,
// sent with status 429 (type and code insufficient_quota; quoted whole in
// langchain-ai/langchainjs#1929 and OpenHands/OpenHands#998). Clients must
// not retry it.
const InsufficientQuotaBody = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`

// Requests returns a copy of the chat completion requests received so far,
// in arrival order (including unauthorized and malformed ones).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Calls returns the number of chat completion requests received so far.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// Pending returns the number of scripted replies not yet served.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// record stores req, numbering it, and returns it with the required key.
func (s *Server) record(req Request) (Request, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.N = len(s.reqs) + 1
	s.reqs = append(s.reqs, req)
	return req, s.key
}

// next returns the reply for req: the first scripted one, else the handler's.
func (s *Server) next(req Request) (Reply, bool) {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r, true
	}
	fn := s.handler
	s.mu.Unlock()
	if fn == nil {
		return Reply{}, false
	}
	return fn(req), true
}

// authorized reports whether r carries key (or no key is required).
func authorized(r *http.Request, key string) bool {
	return key == "" || r.Header.Get("Authorization") == "Bearer "+key || r.Header.Get("api-key") == key
}

// wait sleeps d, returning false when ctx ends or the server closes first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// serveChat answers a chat completion request.
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	body, readErr := io.ReadAll(io.LimitReader(r.Body, maxBody))
	req := Request{
		Raw:        body,
		Path:       r.URL.Path,
		Query:      r.URL.RawQuery,
		Deployment: r.PathValue("deployment"),
		Header:     r.Header.Clone(),
	}
	decodeErr := readErr
	if decodeErr == nil {
		decodeErr = json.Unmarshal(body, &req.ChatCompletionRequest)
	}
	req, ok := s.admit(w, r, req, decodeErr)
	if !ok || !s.checkRequest(w, req) || !s.checkProvider(w, req) {
		return
	}
	reply, ok := s.reply(w, r, req)
	switch {
	case !ok:
	case req.Stream:
		s.writeStream(w, r, req, reply)
	default:
		s.writeCompletion(w, req, reply)
	}
}

// reply takes the reply to req and plays its scripted delay, hang or HTTP
// error; ok is false when that (or a missing script) answered already.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, req Request) (reply Reply, ok bool) {
	reply, ok = s.next(req)
	if !ok {
		writeError(w, http.StatusInternalServerError, "",
			fmt.Sprintf("fakemodel: no scripted reply for request %d (queue empty and no handler)", req.N))
		return reply, false
	}
	if !s.wait(r.Context(), reply.Delay) {
		panic(http.ErrAbortHandler) // the client left or the server closes: cut the connection
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
		return reply, false
	case reply.FailedGeneration != "" && !req.Stream && s.mode() == Groq:
		f := groqToolUseFailed(reply.FailedGeneration)
		writeJSON(w, http.StatusBadRequest, f)
		return reply, false
	}
	return reply, true
}

// mode is the server's provider mode.
func (s *Server) mode() Provider {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.provider
}

// writeScriptedError writes an error reply.
func (s *Server) writeScriptedError(w http.ResponseWriter, reply Reply) {
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	if reply.ErrorBody == "" {
		writeError(w, reply.Status, "", fmt.Sprintf("fakemodel: scripted status %d", reply.Status))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(reply.Status)
	_, _ = io.WriteString(w, reply.ErrorBody)
}

// model returns the model name a reply names.
func model(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return DefaultModel
}

// writeCompletion writes a non-streamed completion.
func (s *Server) writeCompletion(w http.ResponseWriter, req Request, reply Reply) {
	calls := reply.toolCalls(req.N)
	msg := wireMessage{Role: openai.ChatMessageRoleAssistant}
	if text := reply.text(); text != "" || len(calls) == 0 {
		msg.Content = &text
	}
	for _, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{
			ID: c.ID, Type: "function", Function: wireFunction{Name: c.Name, Arguments: c.Arguments},
		})
	}
	body, err := json.Marshal(wireCompletion{
		ID:      completionID(req.N),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   model(req),
		Choices: []wireChoice{{Message: msg, FinishReason: reply.finishReason(calls)}},
		Usage:   toWireUsage(s.usage(reply, req, calls)),
	})
	if err != nil {
		writeError(w, http.StatusInternalServerError, "", "fakemodel: encode: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if reply.DropMidStream {
		// Promise the whole body, send half, then cut the connection.
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// serveModels lists the models.
func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	ids, ok := s.listed(w, r)
	if !ok {
		return
	}
	list := wireModels{Object: "list", Data: []wireModel{}}
	for _, id := range ids {
		list.Data = append(list.Data, wireModel{ID: id, Object: "model", Created: 1700000000, OwnedBy: "fakemodel"})
	}
	writeJSON(w, http.StatusOK, list)
}

// serveModel describes one model, or answers 404 for an unknown one.
func (s *Server) serveModel(w http.ResponseWriter, r *http.Request) {
	ids, ok := s.listed(w, r)
	if !ok {
		return
	}
	id := r.PathValue("model")
	for _, m := range ids {
		if m == id {
			writeJSON(w, http.StatusOK, wireModel{ID: id, Object: "model", Created: 1700000000, OwnedBy: "fakemodel"})
			return
		}
	}
	writeError(w, http.StatusNotFound, "model_not_found", fmt.Sprintf("fakemodel: the model %q does not exist", id))
}

// serveNotFound answers any other route with a hint about the base URL.
func serveNotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "", fmt.Sprintf(
		"fakemodel: no route for %s %s (the OpenAI base URL is URL(), ending in /v1; Azure uses RootURL())",
		r.Method, r.URL.Path))
}
