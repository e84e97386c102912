package fakemodel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
)

// client returns a real go-openai client for s.
func client(s *fakemodel.Server) *openai.Client {
	return openai.NewClientWithConfig(s.ClientConfig())
}

// chatRequest is a small request with one user message.
func chatRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    "test-model",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
	}
}

// streamed is what a test collects from a stream.
type streamed struct {
	deltas []string
	calls  map[int]*openai.ToolCall
	heads  map[int]int // index -> chunks that carried the call's name
	finish openai.FinishReason
	usage  *openai.Usage
	empty  int // chunks with no choices
	order  []int
	err    error
}

// collect reads a whole stream through the real client.
func collect(t *testing.T, c *openai.Client, req openai.ChatCompletionRequest) streamed {
	t.Helper()
	out := streamed{calls: map[int]*openai.ToolCall{}, heads: map[int]int{}}
	stream, err := c.CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		out.err = err
		return out
	}
	defer stream.Close()
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			out.err = err
			return out
		}
		if chunk.Usage != nil {
			out.usage = chunk.Usage
		}
		if len(chunk.Choices) == 0 {
			out.empty++
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Content != "" {
				out.deltas = append(out.deltas, ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Index == nil {
					t.Fatalf("tool call delta without index: %+v", tc)
				}
				i := *tc.Index
				out.order = append(out.order, i)
				call, ok := out.calls[i]
				if !ok {
					call = &openai.ToolCall{ID: tc.ID, Type: tc.Type}
					out.calls[i] = call
				}
				if tc.Function.Name != "" {
					out.heads[i]++
					call.Function.Name = tc.Function.Name
				}
				call.Function.Arguments += tc.Function.Arguments
			}
			if ch.FinishReason != "" {
				out.finish = ch.FinishReason
			}
		}
	}
}

func TestStreamText(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "Hello there, world", Chunks: 4})
	got := collect(t, client(s), chatRequest("hi"))
	if got.err != nil {
		t.Fatal(got.err)
	}
	if len(got.deltas) != 4 {
		t.Errorf("deltas = %q, want 4", got.deltas)
	}
	if strings.Join(got.deltas, "") != "Hello there, world" {
		t.Errorf("text = %q", strings.Join(got.deltas, ""))
	}
	if got.finish != openai.FinishReasonStop {
		t.Errorf("finish = %q, want stop", got.finish)
	}
	if got.usage != nil {
		t.Errorf("usage sent without stream_options.include_usage: %+v", got.usage)
	}
}

func TestStreamUsage(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Text: "ok", Usage: fakemodel.Usage{Prompt: 1200, Cached: 1024, Completion: 7}},
		fakemodel.Reply{Text: "estimated"},
		fakemodel.Reply{Text: "none", NoUsage: true},
	)
	req := chatRequest(strings.Repeat("long prompt ", 100))
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}

	got := collect(t, client(s), req)
	if got.err != nil {
		t.Fatal(got.err)
	}
	if got.usage == nil {
		t.Fatal("no usage chunk")
	}
	if got.empty != 1 {
		t.Errorf("chunks with empty choices = %d, want 1 (the usage chunk)", got.empty)
	}
	if got.usage.PromptTokens != 1200 || got.usage.CompletionTokens != 7 || got.usage.TotalTokens != 1207 {
		t.Errorf("usage = %+v", got.usage)
	}
	if got.usage.PromptTokensDetails == nil || got.usage.PromptTokensDetails.CachedTokens != 1024 {
		t.Errorf("cached = %+v, want 1024", got.usage.PromptTokensDetails)
	}

	got = collect(t, client(s), req)
	if got.err != nil || got.usage == nil {
		t.Fatalf("estimated usage: err %v usage %v", got.err, got.usage)
	}
	raw := s.Requests()[1].Raw
	if got.usage.PromptTokens != len(raw)/4 || got.usage.CompletionTokens < 1 {
		t.Errorf("estimated usage = %+v, want prompt %d", got.usage, len(raw)/4)
	}

	got = collect(t, client(s), req)
	if got.err != nil || got.usage != nil {
		t.Errorf("NoUsage: err %v usage %+v, want no usage", got.err, got.usage)
	}
}

func TestStreamToolCalls(t *testing.T) {
	for _, interleave := range []bool{false, true} {
		t.Run(fmt.Sprint("interleave=", interleave), func(t *testing.T) {
			s := fakemodel.NewTB(t)
			s.Enqueue(fakemodel.Reply{
				Text: "Reading two files.",
				ToolCalls: []fakemodel.ToolCall{
					{ID: "call_a", Name: "read_file", Arguments: `{"path":"/project/a.md"}`},
					{Name: "read_file", Arguments: `{"path":"/project/b.md"}`},
				},
				Chunks:          3,
				InterleaveTools: interleave,
			})
			got := collect(t, client(s), chatRequest("read"))
			if got.err != nil {
				t.Fatal(got.err)
			}
			if strings.Join(got.deltas, "") != "Reading two files." {
				t.Errorf("text = %q", strings.Join(got.deltas, ""))
			}
			if got.finish != openai.FinishReasonToolCalls {
				t.Errorf("finish = %q, want tool_calls", got.finish)
			}
			want := map[int]openai.ToolCall{
				0: {ID: "call_a", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"/project/a.md"}`}},
				1: {ID: "call_1_1", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"/project/b.md"}`}},
			}
			if len(got.calls) != len(want) {
				t.Fatalf("calls = %d, want %d", len(got.calls), len(want))
			}
			for i, w := range want {
				if *got.calls[i] != w {
					t.Errorf("call %d = %+v, want %+v", i, *got.calls[i], w)
				}
				if got.heads[i] != 1 {
					t.Errorf("call %d: name sent in %d chunks, want 1", i, got.heads[i])
				}
			}
			// 1 header + 3 argument pieces per call.
			if len(got.order) != 8 {
				t.Fatalf("tool deltas = %v, want 8", got.order)
			}
			interleaved := got.order[1] == 1
			if interleaved != interleave {
				t.Errorf("delta order %v, interleaved = %v, want %v", got.order, interleaved, interleave)
			}
		})
	}
}

func TestStreamMalformedArgumentsSentAsIs(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: `{"path": "x.md", "content": `}}})
	got := collect(t, client(s), chatRequest("save"))
	if got.err != nil {
		t.Fatal(got.err)
	}
	if args := got.calls[0].Function.Arguments; args != `{"path": "x.md", "content": ` {
		t.Errorf("arguments = %q", args)
	}
}

func TestStreamEmpty(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "ignored", ToolCalls: []fakemodel.ToolCall{{Name: "x"}}, Empty: true}, fakemodel.Reply{})
	for i := range 2 {
		got := collect(t, client(s), chatRequest("hi"))
		if got.err != nil {
			t.Fatal(got.err)
		}
		if len(got.deltas) != 0 || len(got.calls) != 0 || got.finish != openai.FinishReasonStop {
			t.Errorf("reply %d: deltas %q calls %d finish %q, want empty stop", i, got.deltas, len(got.calls), got.finish)
		}
	}
}

func TestStreamSplitsOnRuneBoundaries(t *testing.T) {
	s := fakemodel.NewTB(t)
	text := "Grüße, 世界 ✓"
	s.Enqueue(fakemodel.Reply{Text: text, Chunks: 7})
	got := collect(t, client(s), chatRequest("hi"))
	if got.err != nil {
		t.Fatal(got.err)
	}
	if len(got.deltas) != 7 {
		t.Errorf("deltas = %q, want 7", got.deltas)
	}
	for _, d := range got.deltas {
		if strings.ContainsRune(d, '\uFFFD') {
			t.Errorf("delta %q split inside a rune", d)
		}
	}
	if strings.Join(got.deltas, "") != text {
		t.Errorf("text = %q, want %q", strings.Join(got.deltas, ""), text)
	}
}

func TestDropMidStream(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Text: "one two three", Chunks: 3, DropMidStream: true, DropAfter: 2},
		fakemodel.Reply{Text: "one two three", DropMidStream: true},
	)
	got := collect(t, client(s), chatRequest("hi"))
	if !errors.Is(got.err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want unexpected EOF", got.err)
	}
	if len(got.deltas) != 2 || got.finish != "" {
		t.Errorf("before the cut: deltas %q finish %q, want 2 deltas and no finish", got.deltas, got.finish)
	}
	got = collect(t, client(s), chatRequest("hi"))
	if !errors.Is(got.err, io.ErrUnexpectedEOF) || len(got.deltas) != 0 {
		t.Errorf("DropAfter 0: err %v deltas %q, want unexpected EOF and no delta", got.err, got.deltas)
	}
}

func TestNonStream(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Text: "plain answer", Usage: fakemodel.Usage{Prompt: 50, Cached: 32, Completion: 3}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
		fakemodel.Reply{Text: "cut", DropMidStream: true},
	)
	c := client(s)
	resp, err := c.CreateChatCompletion(context.Background(), chatRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Choices) != 1 || resp.Choices[0].Message.Content != "plain answer" ||
		resp.Choices[0].FinishReason != openai.FinishReasonStop || resp.Choices[0].Message.Role != "assistant" {
		t.Errorf("response = %+v", resp.Choices)
	}
	if resp.Usage.PromptTokens != 50 || resp.Usage.CompletionTokens != 3 || resp.Usage.PromptTokensDetails.CachedTokens != 32 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if resp.Model != "test-model" {
		t.Errorf("model = %q, want the requested one", resp.Model)
	}

	resp, err = c.CreateChatCompletion(context.Background(), chatRequest("read"))
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID != "c1" || msg.ToolCalls[0].Function.Name != "read_file" ||
		msg.ToolCalls[0].Function.Arguments != `{"path":"a"}` || msg.ToolCalls[0].Type != "function" {
		t.Errorf("tool calls = %+v", msg.ToolCalls)
	}
	if resp.Choices[0].FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("finish = %q", resp.Choices[0].FinishReason)
	}

	if _, err = c.CreateChatCompletion(context.Background(), chatRequest("cut")); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut body: err = %v, want unexpected EOF", err)
	}
}

func TestErrorStatusWithRetryAfter(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Status: http.StatusTooManyRequests, RetryAfter: "1"},
		fakemodel.Reply{Status: http.StatusTooManyRequests, RetryAfter: "7"},
		fakemodel.Reply{Status: http.StatusServiceUnavailable, ErrorBody: "upstream down"},
	)
	_, err := client(s).CreateChatCompletionStream(context.Background(), chatRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Type != "rate_limit_error" {
		t.Fatalf("err = %#v, want APIError 429 rate_limit_error", err)
	}

	// go-openai drops response headers on errors; read it with plain HTTP.
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" {
		t.Errorf("status %d Retry-After %q, want 429 and 7", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	_, err = client(s).CreateChatCompletion(context.Background(), chatRequest("hi"))
	var reqErr *openai.RequestError
	if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != 503 || string(reqErr.Body) != "upstream down" {
		t.Errorf("err = %#v, want RequestError 503 with the raw body", err)
	}
}

func TestNoScriptedReply(t *testing.T) {
	s := fakemodel.NewTB(t)
	_, err := client(s).CreateChatCompletionStream(context.Background(), chatRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || !strings.Contains(apiErr.Message, "fakemodel: no scripted reply") {
		t.Errorf("err = %v, want 500 saying fakemodel: no scripted reply", err)
	}
	if s.Calls() != 1 {
		t.Errorf("calls = %d, want 1", s.Calls())
	}
}

func TestHandleAfterQueue(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "scripted"})
	s.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "echo: " + req.LastUserText()}
	})
	c := client(s)
	for _, want := range []string{"scripted", "echo: second", "echo: third"} {
		msg := strings.Fields(want)
		got := collect(t, c, chatRequest(msg[len(msg)-1]))
		if got.err != nil {
			t.Fatal(got.err)
		}
		if text := strings.Join(got.deltas, ""); text != want {
			t.Errorf("text = %q, want %q", text, want)
		}
	}
	if s.Pending() != 0 {
		t.Errorf("pending = %d, want 0", s.Pending())
	}
}

func TestRecording(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "a"}, fakemodel.Reply{Text: "b"})
	c := client(s)
	req := chatRequest("first")
	req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "read_file"}}}
	if got := collect(t, c, req); got.err != nil {
		t.Fatal(got.err)
	}
	if _, err := c.CreateChatCompletion(context.Background(), chatRequest("second")); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || s.Calls() != 2 {
		t.Fatalf("requests = %d, calls = %d, want 2", len(reqs), s.Calls())
	}
	r0, r1 := reqs[0], reqs[1]
	if !r0.Stream || r1.Stream {
		t.Errorf("stream flags = %v %v, want true false", r0.Stream, r1.Stream)
	}
	if r0.N != 1 || r1.N != 2 || r0.Model != "test-model" || r0.Path != "/v1/chat/completions" {
		t.Errorf("request 0 = N %d model %q path %q", r0.N, r0.Model, r0.Path)
	}
	if r0.LastUserText() != "first" || r1.LastUserText() != "second" {
		t.Errorf("user texts = %q %q", r0.LastUserText(), r1.LastUserText())
	}
	if len(r0.Tools) != 1 || r0.Tools[0].Function.Name != "read_file" || len(r1.Tools) != 0 {
		t.Errorf("tools = %+v / %+v", r0.Tools, r1.Tools)
	}
	if !strings.Contains(string(r0.Raw), `"stream":true`) {
		t.Errorf("raw body = %s", r0.Raw)
	}
	if r0.Header.Get("Authorization") != "Bearer fake-key" {
		t.Errorf("authorization = %q", r0.Header.Get("Authorization"))
	}
	// The copy is the caller's.
	reqs[0].Model = "changed"
	if s.Requests()[0].Model != "test-model" {
		t.Error("Requests returned shared storage")
	}
}

func TestConcurrentRequests(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "re: " + req.LastUserText()}
	})
	c := client(s)
	const n = 16
	var wg sync.WaitGroup
	texts := make([]string, n)
	for i := range n {
		wg.Go(func() {
			stream, err := c.CreateChatCompletionStream(context.Background(), chatRequest(fmt.Sprint(i)))
			if err != nil {
				texts[i] = err.Error()
				return
			}
			defer stream.Close()
			for {
				chunk, err := stream.Recv()
				if err != nil {
					return
				}
				for _, ch := range chunk.Choices {
					texts[i] += ch.Delta.Content
				}
			}
		})
	}
	wg.Wait()
	for i, got := range texts {
		if got != fmt.Sprint("re: ", i) {
			t.Errorf("reply %d = %q", i, got)
		}
	}
	ns := make([]int, 0, n)
	for _, r := range s.Requests() {
		ns = append(ns, r.N)
	}
	sort.Ints(ns)
	for i, v := range ns {
		if v != i+1 {
			t.Fatalf("request numbers = %v, want 1..%d", ns, n)
		}
	}
}

func TestDelayAndHangEndWithTheClient(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "late", Delay: time.Hour}, fakemodel.Reply{Hang: true})
	c := client(s)
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := c.CreateChatCompletionStream(ctx, chatRequest("hi"))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want deadline exceeded", err)
		}
	}
	if s.Calls() != 2 {
		t.Errorf("calls = %d, want 2", s.Calls())
	}
}

func TestCloseReleasesHangingRequest(t *testing.T) {
	s := fakemodel.New()
	s.Enqueue(fakemodel.Reply{Hang: true})
	errc := make(chan error, 1)
	go func() {
		_, err := client(s).CreateChatCompletionStream(context.Background(), chatRequest("hi"))
		errc <- err
	}()
	for s.Calls() == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if err := <-errc; err == nil {
		t.Error("hanging request succeeded after Close, want an error")
	}
	s.Close() // twice is fine
}

func TestRequireKey(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.RequireKey("right-key")
	s.Enqueue(fakemodel.Reply{Text: "ok"})
	_, err := client(s).CreateChatCompletionStream(context.Background(), chatRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Errorf("wrong key: err = %v, want 401 invalid_api_key", err)
	}
	if _, err := client(s).ListModels(context.Background()); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
		t.Errorf("models with wrong key: err = %v, want 401", err)
	}
	if s.Pending() != 1 {
		t.Errorf("an unauthorized request used a scripted reply")
	}
	cfg := openai.DefaultConfig("right-key")
	cfg.BaseURL = s.URL()
	if got := collect(t, openai.NewClientWithConfig(cfg), chatRequest("hi")); got.err != nil {
		t.Errorf("right key: %v", got.err)
	}
}

func TestBadRequestBody(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "unused"})
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(`{"messages": [`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "fakemodel: bad request body") {
		t.Errorf("status %d body %s, want 400 bad request body", resp.StatusCode, body)
	}
	if s.Calls() != 1 || string(s.Requests()[0].Raw) != `{"messages": [` || s.Pending() != 1 {
		t.Errorf("calls %d pending %d, want the bad request recorded and the reply kept", s.Calls(), s.Pending())
	}
}

func TestUnknownRoute(t *testing.T) {
	s := fakemodel.NewTB(t)
	cfg := s.ClientConfig()
	cfg.BaseURL = s.RootURL() // forgot /v1
	_, err := openai.NewClientWithConfig(cfg).CreateChatCompletionStream(context.Background(), chatRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || !strings.Contains(apiErr.Message, "ending in /v1") {
		t.Errorf("err = %v, want 404 with a base URL hint", err)
	}
	if s.Calls() != 0 {
		t.Errorf("calls = %d, want 0", s.Calls())
	}
}

func TestModels(t *testing.T) {
	s := fakemodel.NewTB(t)
	c := client(s)
	list, err := c.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Models) != 1 || list.Models[0].ID != fakemodel.DefaultModel {
		t.Errorf("models = %+v", list.Models)
	}
	s.SetModels("gpt-x", "llama")
	if list, err = c.ListModels(context.Background()); err != nil || len(list.Models) != 2 || list.Models[1].ID != "llama" {
		t.Errorf("models = %+v, err %v", list.Models, err)
	}
	if m, err := c.GetModel(context.Background(), "gpt-x"); err != nil || m.ID != "gpt-x" {
		t.Errorf("GetModel = %+v, %v", m, err)
	}
	var apiErr *openai.APIError
	if _, err := c.GetModel(context.Background(), "nope"); !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 {
		t.Errorf("GetModel(nope) err = %v, want 404", err)
	}
}

func TestAzure(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.RequireKey("azure-key")
	s.Enqueue(fakemodel.Reply{Text: "from azure"})
	cfg := openai.DefaultAzureConfig("azure-key", s.RootURL())
	cfg.APIVersion = "2024-10-21"
	c := openai.NewClientWithConfig(cfg)
	req := chatRequest("hi")
	req.Model = "my-deployment"
	got := collect(t, c, req)
	if got.err != nil {
		t.Fatal(got.err)
	}
	if strings.Join(got.deltas, "") != "from azure" {
		t.Errorf("text = %q", strings.Join(got.deltas, ""))
	}
	r := s.Requests()[0]
	if r.Deployment != "my-deployment" || r.Query != "api-version=2024-10-21" || r.Header.Get("api-key") != "azure-key" {
		t.Errorf("azure request: deployment %q query %q", r.Deployment, r.Query)
	}
	if list, err := c.ListModels(context.Background()); err != nil || len(list.Models) != 1 {
		t.Errorf("azure models = %+v, %v", list.Models, err)
	}
}
