package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
)

const testKey = "sk-test-secret-123"

// sleeps records the delays a client asked to wait.
type sleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.ds = append(s.ds, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.ds...)
}

// newClient returns a client for s that records its sleeps instead of
// waiting; edit, when not nil, adjusts the config.
func newClient(s *fakemodel.Server, edit func(*model.Config)) (*model.Client, *sleeps) {
	sl := &sleeps{}
	cfg := model.Config{APIKey: testKey, BaseURL: s.URL(), Model: "test-model", Sleep: sl.sleep}
	if edit != nil {
		edit(&cfg)
	}
	return model.New(cfg), sl
}

// userRequest is a request with one user message.
func userRequest(text string) llm.Request {
	return llm.Request{Messages: []transcript.Message{{Role: transcript.RoleUser, Content: text}}}
}

// deltas collects onText calls.
type deltas struct {
	mu sync.Mutex
	ds []string
}

func (d *deltas) on(s string) {
	d.mu.Lock()
	d.ds = append(d.ds, s)
	d.mu.Unlock()
}

func (d *deltas) text() string { return strings.Join(d.ds, "") }

// rawField decodes the JSON body of a recorded request into a generic map.
func rawField(t *testing.T, r fakemodel.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Raw, &m); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return m
}

func TestCompleteStreamsTextInOrder(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "The quick brown fox jumps.", Chunks: 5})
	c, _ := newClient(s, nil)
	var d deltas
	resp, err := c.Complete(context.Background(), userRequest("hi"), d.on)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.ds) != 5 || d.text() != "The quick brown fox jumps." {
		t.Errorf("deltas = %q, want the text in 5 pieces", d.ds)
	}
	if resp.Message.Role != transcript.RoleAssistant || resp.Message.Content != "The quick brown fox jumps." {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.Message.ToolCalls != nil || resp.FinishReason != "stop" || resp.Tries != 1 {
		t.Errorf("tool calls %v finish %q tries %d", resp.Message.ToolCalls, resp.FinishReason, resp.Tries)
	}

	req := s.Requests()[0]
	if !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage {
		t.Errorf("stream %v stream_options %+v, want streaming with include_usage", req.Stream, req.StreamOptions)
	}
	if req.Model != "test-model" || req.LastUserText() != "hi" {
		t.Errorf("model %q text %q", req.Model, req.LastUserText())
	}
	body := rawField(t, req)
	for _, absent := range []string{"tools", "max_tokens", "max_completion_tokens", "temperature"} {
		if _, ok := body[absent]; ok {
			t.Errorf("request sends %q unasked: %s", absent, req.Raw)
		}
	}
	if req.Header.Get("Authorization") != "Bearer "+testKey {
		t.Errorf("authorization header = %q", req.Header.Get("Authorization"))
	}
}

func TestCompleteAssemblesParallelToolCalls(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{
		Text: "Let me look.",
		ToolCalls: []fakemodel.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"/project/agents/pm.md"}`},
			{ID: "call_b", Name: "preload_workflow", Arguments: `{"workflow":"/project/workflows/prd"}`},
		},
		Chunks:          4,
		InterleaveTools: true,
	})
	c, _ := newClient(s, nil)
	tools := []llm.Tool{
		{Name: "read_file"},
		{Name: "preload_workflow"},
	}
	var d deltas
	resp, err := c.Complete(context.Background(), llm.Request{Messages: userRequest("go").Messages, Tools: tools}, d.on)
	if err != nil {
		t.Fatal(err)
	}
	want := []transcript.ToolCall{
		{ID: "call_a", Type: "function", Function: transcript.FunctionCall{Name: "read_file", Arguments: `{"path":"/project/agents/pm.md"}`}},
		{ID: "call_b", Type: "function", Function: transcript.FunctionCall{Name: "preload_workflow", Arguments: `{"workflow":"/project/workflows/prd"}`}},
	}
	if len(resp.Message.ToolCalls) != len(want) {
		t.Fatalf("tool calls = %+v", resp.Message.ToolCalls)
	}
	for i, w := range want {
		got := resp.Message.ToolCalls[i]
		if got.ID != w.ID || got.Type != w.Type || got.Function != w.Function {
			t.Errorf("call %d = %+v, want %+v", i, got, w)
		}
	}
	if resp.Message.Content != "Let me look." || d.text() != "Let me look." || resp.FinishReason != "tool_calls" {
		t.Errorf("content %q deltas %q finish %q", resp.Message.Content, d.text(), resp.FinishReason)
	}
	if sent := s.Requests()[0].Tools; len(sent) != 2 || sent[1].Function.Name != "preload_workflow" {
		t.Errorf("tools sent = %+v", sent)
	}
}

func TestCompleteKeepsMalformedArguments(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: `{"path": "a.md", "con`}}})
	c, _ := newClient(s, nil)
	resp, err := c.Complete(context.Background(), userRequest("save"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Function.Arguments != `{"path": "a.md", "con` {
		t.Errorf("tool calls = %+v", resp.Message.ToolCalls)
	}
	if resp.Message.ToolCalls[0].ID != "call_1_0" {
		t.Errorf("id = %q, want the server's", resp.Message.ToolCalls[0].ID)
	}
}

func TestCompleteUsage(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Text: "a", Usage: fakemodel.Usage{Prompt: 5000, Cached: 4096, Completion: 12}},
		fakemodel.Reply{Text: "b", NoUsage: true},
	)
	c, _ := newClient(s, nil)
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{Prompt: 5000, Cached: 4096, Completion: 12}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	resp, err = c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{}) || resp.Message.Content != "b" {
		t.Errorf("no usage sent: usage %+v content %q, want zeros", resp.Usage, resp.Message.Content)
	}
}

func TestCompleteEmptyReply(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Empty: true})
	c, _ := newClient(s, nil)
	var d deltas
	resp, err := c.Complete(context.Background(), userRequest("hi"), d.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "" || resp.Message.ToolCalls != nil || resp.Message.Role != "assistant" || len(d.ds) != 0 {
		t.Errorf("message = %+v deltas %q, want empty assistant message", resp.Message, d.ds)
	}
	if resp.FinishReason != "stop" || resp.Tries != 1 {
		t.Errorf("finish %q tries %d", resp.FinishReason, resp.Tries)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Status: http.StatusTooManyRequests, RetryAfter: "3"},
		fakemodel.Reply{Status: http.StatusTooManyRequests, RetryAfter: time.Now().Add(10 * time.Second).UTC().Format(http.TimeFormat)},
		fakemodel.Reply{Text: "finally"},
	)
	var retries []string
	c, sl := newClient(s, func(cfg *model.Config) {
		cfg.OnRetry = func(attempt int, err error) { retries = append(retries, fmt.Sprint(attempt, " ", err)) }
	})
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Tries != 3 || s.Calls() != 3 || resp.Message.Content != "finally" {
		t.Errorf("tries %d calls %d content %q", resp.Tries, s.Calls(), resp.Message.Content)
	}
	ds := sl.all()
	if len(ds) != 2 {
		t.Fatalf("sleeps = %v, want 2", ds)
	}
	if ds[0] < 3*time.Second || ds[0] > 4*time.Second {
		t.Errorf("first wait %v, want the Retry-After of 3s", ds[0])
	}
	if ds[1] < 8*time.Second || ds[1] > 10*time.Second {
		t.Errorf("second wait %v, want about 10s from the HTTP-date Retry-After", ds[1])
	}
	if len(retries) != 2 || !strings.HasPrefix(retries[0], "1 model call: status 429") || !strings.HasPrefix(retries[1], "2 ") {
		t.Errorf("OnRetry calls = %q", retries)
	}
}

func TestRetryAfterTooLongGivesUp(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Status: http.StatusTooManyRequests, RetryAfter: "3600"}, fakemodel.Reply{Text: "unused"})
	c, sl := newClient(s, nil)
	_, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err == nil || !strings.Contains(err.Error(), "status 429") || !strings.Contains(err.Error(), "retry after 1h0m0s") {
		t.Errorf("err = %v, want 429 naming the hour-long Retry-After", err)
	}
	if s.Calls() != 1 || len(sl.all()) != 0 {
		t.Errorf("calls %d sleeps %v, want 1 call and no wait", s.Calls(), sl.all())
	}
}

func TestServerErrorStorm(t *testing.T) {
	for _, tries := range []int{0, 5} {
		t.Run(fmt.Sprint("MaxTries=", tries), func(t *testing.T) {
			s := fakemodel.NewTB(t)
			s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Status: 500} })
			c, sl := newClient(s, func(cfg *model.Config) { cfg.MaxTries = tries })
			want := tries
			if want == 0 {
				want = model.DefaultMaxTries
			}
			_, err := c.Complete(context.Background(), userRequest("hi"), nil)
			if s.Calls() != want {
				t.Errorf("calls = %d, want %d", s.Calls(), want)
			}
			wantMsg := fmt.Sprintf("model call: status 500 after %d tries: fakemodel: scripted status 500", want)
			if err == nil || err.Error() != wantMsg {
				t.Errorf("err = %v, want %q", err, wantMsg)
			}
			var me *llm.Error
			if !errors.As(err, &me) || me.Status != 500 || me.Tries != want || me.Partial {
				t.Errorf("error = %#v", me)
			}
			// Backoff doubles from 500ms with equal jitter: [d/2, d].
			ds := sl.all()
			if len(ds) != want-1 {
				t.Fatalf("sleeps = %v, want %d", ds, want-1)
			}
			for i, d := range ds {
				hi := model.DefaultBaseBackoff << i
				if d < hi/2 || d > hi {
					t.Errorf("wait %d = %v, want in [%v, %v]", i+1, d, hi/2, hi)
				}
			}
		})
	}
}

func TestRetryableStatuses(t *testing.T) {
	for _, status := range []int{408, 409, 429, 500, 502, 503, 504} {
		s := fakemodel.NewTB(t)
		s.Enqueue(fakemodel.Reply{Status: status}, fakemodel.Reply{Text: "ok"})
		c, _ := newClient(s, nil)
		resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
		if err != nil || resp.Tries != 2 || resp.Message.Content != "ok" {
			t.Errorf("status %d: resp %+v err %v, want success on the second try", status, resp, err)
		}
	}
}

func TestClientErrorsNotRetried(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 422} {
		s := fakemodel.NewTB(t)
		s.Enqueue(fakemodel.Reply{Status: status}, fakemodel.Reply{Text: "unused"})
		c, sl := newClient(s, nil)
		_, err := c.Complete(context.Background(), userRequest("hi"), nil)
		want := fmt.Sprintf("model call: status %d: fakemodel: scripted status %d", status, status)
		if err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
		if s.Calls() != 1 || len(sl.all()) != 0 {
			t.Errorf("status %d: calls %d sleeps %v, want 1 and none", status, s.Calls(), sl.all())
		}
	}
}

func TestErrorNeverShowsAPIKey(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error"}}`})
	c, _ := newClient(s, nil)
	_, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("err = %v, want the key redacted", err)
	}
}

func TestNonJSONErrorBody(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Status: 502, ErrorBody: "<html>Bad Gateway</html>"}, fakemodel.Reply{Status: 502, ErrorBody: strings.Repeat("x", 5000)})
	c, _ := newClient(s, func(cfg *model.Config) { cfg.MaxTries = 2 })
	_, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "model call: status 502 after 2 tries: ") || len(err.Error()) > 400 {
		t.Errorf("err = %v, want a short 502 message", err)
	}
}

func TestCallTimeoutRetriedThenFails(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Hang: true} })
	c, sl := newClient(s, func(cfg *model.Config) { cfg.CallTimeout = 30 * time.Millisecond })
	_, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if !errors.Is(err, model.ErrCallTimeout) {
		t.Fatalf("err = %v, want ErrCallTimeout", err)
	}
	if s.Calls() != 3 || len(sl.all()) != 2 {
		t.Errorf("calls %d sleeps %d, want 3 and 2", s.Calls(), len(sl.all()))
	}
	if !strings.Contains(err.Error(), "after 3 tries: attempt timed out after 30ms") {
		t.Errorf("err = %v", err)
	}
}

func TestCallTimeoutThenSuccess(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Hang: true}, fakemodel.Reply{Text: "back"})
	c, _ := newClient(s, func(cfg *model.Config) { cfg.CallTimeout = 30 * time.Millisecond })
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil || resp.Tries != 2 || resp.Message.Content != "back" {
		t.Errorf("resp %+v err %v, want success on try 2", resp, err)
	}
}

func TestCancelDuringCallStops(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Hang: true} })
	c, sl := newClient(s, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for s.Calls() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := c.Complete(ctx, userRequest("hi"), nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, model.ErrCallTimeout) {
		t.Errorf("err = %v, want context canceled", err)
	}
	if s.Calls() != 1 || len(sl.all()) != 0 {
		t.Errorf("calls %d sleeps %v, want no retry", s.Calls(), sl.all())
	}
}

func TestCancelDuringBackoffStops(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Status: 503}, fakemodel.Reply{Text: "unused"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := model.New(model.Config{
		BaseURL: s.URL(), Model: "m",
		BaseBackoff: time.Hour, // the real timer: only the cancel can end the wait
		OnRetry:     func(int, error) { cancel() },
	})
	_, err := c.Complete(ctx, userRequest("hi"), nil)
	if !errors.Is(err, context.Canceled) || s.Calls() != 1 {
		t.Errorf("err %v calls %d, want context canceled after 1 call", err, s.Calls())
	}
}

func TestDropBeforeAnyDeltaIsRetried(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Text: "whole answer", DropMidStream: true, DropAfter: 0},
		fakemodel.Reply{Text: "whole answer"},
	)
	c, _ := newClient(s, nil)
	var d deltas
	resp, err := c.Complete(context.Background(), userRequest("hi"), d.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Tries != 2 || d.text() != "whole answer" || resp.Message.Content != "whole answer" {
		t.Errorf("tries %d deltas %q content %q", resp.Tries, d.text(), resp.Message.Content)
	}
}

func TestDropAfterDeltasIsNotDuplicated(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Text: "one two three four", Chunks: 4, DropMidStream: true, DropAfter: 2},
		fakemodel.Reply{Text: "one two three four"},
	)
	c, _ := newClient(s, nil)
	var d deltas
	_, err := c.Complete(context.Background(), userRequest("hi"), d.on)
	var me *llm.Error
	if !errors.As(err, &me) || !me.Partial || me.Tries != 1 {
		t.Fatalf("err = %v, want a partial-output error after 1 try", err)
	}
	if !strings.Contains(err.Error(), "stream broke after partial output") {
		t.Errorf("err = %v", err)
	}
	if len(d.ds) != 2 || !strings.HasPrefix("one two three four", d.text()) || s.Calls() != 1 || s.Pending() != 1 {
		t.Errorf("deltas %q calls %d pending %d, want the 2 deltas once and no retry", d.text(), s.Calls(), s.Pending())
	}
}

func TestDropWithoutListenerIsRetried(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(
		fakemodel.Reply{Text: "one two three four", Chunks: 4, DropMidStream: true, DropAfter: 2},
		fakemodel.Reply{
			ToolCalls:     []fakemodel.ToolCall{{Name: "read_file", Arguments: `{"path":"a"}`}},
			DropMidStream: true, DropAfter: 2,
		},
		fakemodel.Reply{Text: "one two three four"},
	)
	c, _ := newClient(s, nil)
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil || resp.Tries != 3 || resp.Message.Content != "one two three four" || resp.Message.ToolCalls != nil {
		t.Errorf("resp %+v err %v, want the third try's clean answer", resp, err)
	}
}

func TestConfigErrors(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "unused"})
	cases := []struct {
		name string
		cfg  model.Config
		req  llm.Request
		want string
	}{
		{"unknown api type", model.Config{BaseURL: s.URL(), Model: "m", APIType: "anthropic"}, userRequest("hi"), `unknown API type "anthropic"`},
		{"azure without url", model.Config{Model: "m", APIType: "azure"}, userRequest("hi"), "azure needs a BaseURL"},
		{"no model", model.Config{BaseURL: s.URL()}, userRequest("hi"), "no model configured"},
		{"no messages", model.Config{BaseURL: s.URL(), Model: "m"}, llm.Request{}, "no messages"},
	}
	for _, tc := range cases {
		_, err := model.New(tc.cfg).Complete(context.Background(), tc.req, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "model call: ") {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	var nilClient *model.Client
	if _, err := nilClient.Complete(context.Background(), userRequest("hi"), nil); err == nil {
		t.Error("nil client: no error")
	}
	if s.Calls() != 0 {
		t.Errorf("calls = %d, want none for bad input", s.Calls())
	}
}

func TestUnreachableServer(t *testing.T) {
	s := fakemodel.New()
	url := s.URL()
	s.Close()
	c, sl := newClient(s, func(cfg *model.Config) { cfg.BaseURL = url })
	_, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err == nil || !strings.Contains(err.Error(), "after 3 tries") || len(sl.all()) != 2 {
		t.Errorf("err = %v sleeps %v, want connection refused retried 3 times", err, sl.all())
	}
}

func TestAzure(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.RequireKey(testKey)
	s.Enqueue(fakemodel.Reply{Text: "hello from azure"})
	c, _ := newClient(s, func(cfg *model.Config) {
		cfg.APIType, cfg.BaseURL, cfg.APIVersion, cfg.Model = "Azure", s.RootURL(), "2024-10-21", "gpt-3.5-turbo.prod"
	})
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if resp.Message.Content != "hello from azure" || r.Deployment != "gpt-3.5-turbo.prod" || r.Query != "api-version=2024-10-21" {
		t.Errorf("content %q deployment %q query %q", resp.Message.Content, r.Deployment, r.Query)
	}
	if r.Header.Get("api-key") != testKey || r.Header.Get("Authorization") != "" {
		t.Errorf("auth headers: api-key %q authorization %q", r.Header.Get("api-key"), r.Header.Get("Authorization"))
	}
}

func TestSamplingOptions(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Enqueue(fakemodel.Reply{Text: "a"}, fakemodel.Reply{Text: "b"})
	temp := float32(0.3)
	for _, tc := range []struct{ model, field string }{
		{"llama3.1:8b", "max_tokens"},
		{"o3-mini", "max_completion_tokens"},
	} {
		c, _ := newClient(s, func(cfg *model.Config) {
			cfg.Model, cfg.MaxTokens = tc.model, 1234
			if tc.field == "max_tokens" {
				cfg.Temperature = &temp
			}
		})
		if _, err := c.Complete(context.Background(), userRequest("hi"), nil); err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
	}
	reqs := s.Requests()
	if reqs[0].MaxTokens != 1234 || reqs[0].MaxCompletionTokens != 0 || reqs[0].Temperature != 0.3 {
		t.Errorf("llama: max_tokens %d max_completion_tokens %d temperature %v", reqs[0].MaxTokens, reqs[0].MaxCompletionTokens, reqs[0].Temperature)
	}
	if reqs[1].MaxTokens != 0 || reqs[1].MaxCompletionTokens != 1234 {
		t.Errorf("o3-mini: max_tokens %d max_completion_tokens %d", reqs[1].MaxTokens, reqs[1].MaxCompletionTokens)
	}
}

func TestConcurrentCalls(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.Handle(func(r fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "re " + r.LastUserText()} })
	c, _ := newClient(s, nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			resp, err := c.Complete(context.Background(), userRequest(fmt.Sprint(i)), nil)
			if err == nil && resp.Message.Content != fmt.Sprint("re ", i) {
				err = fmt.Errorf("content %q", resp.Message.Content)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}
