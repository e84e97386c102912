package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

func intp(i int) *int { return &i }

// toolDelta builds a chunk holding one tool-call delta.
func toolDelta(index *int, id, name, args string) *streamChunk {
	var c streamChunk
	c.Choices = make([]struct {
		Index        int         `json:"index"`
		Delta        streamDelta `json:"delta"`
		FinishReason *string     `json:"finish_reason"`
	}, 1)
	c.Choices[0].Delta.ToolCalls = []wireToolCall{{Index: index, ID: id, Function: wireFunction{Name: name, Arguments: args}}}
	return &c
}

// chunkOf decodes one chunk.
func chunkOf(t *testing.T, data string) *streamChunk {
	t.Helper()
	var c streamChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestAssemblerOrdersByIndex(t *testing.T) {
	var a assembler
	for _, c := range []*streamChunk{
		toolDelta(intp(2), "c2", "save_output", `{"path":`),
		toolDelta(intp(0), "c0", "read_file", `{"pa`),
		toolDelta(intp(2), "", "", `"x.md"}`),
		toolDelta(intp(0), "c0", "", `th":"a"}`), // id repeated, as some servers do
		chunkOf(t, `{"choices":[{"index":1,"delta":{"content":"other choice"}}]}`),
		chunkOf(t, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
	} {
		a.add(c, nil)
	}
	resp := a.response()
	got := fmt.Sprint(resp.Message.ToolCalls)
	want := fmt.Sprint([]transcript.ToolCall{
		{ID: "c0", Type: "function", Function: transcript.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
		{ID: "c2", Type: "function", Function: transcript.FunctionCall{Name: "save_output", Arguments: `{"path":"x.md"}`}},
	})
	if got != want {
		t.Errorf("calls = %s\nwant    %s", got, want)
	}
	if resp.Message.Content != "" || resp.FinishReason != "tool_calls" {
		t.Errorf("content %q finish %q", resp.Message.Content, resp.FinishReason)
	}
}

func TestAssemblerWithoutIndex(t *testing.T) {
	var a assembler
	for _, c := range []*streamChunk{
		toolDelta(nil, "x", "read_file", `{"path":`),
		toolDelta(nil, "", "", `"a"}`),
		toolDelta(nil, "y", "read_file", `{"path":"b"}`),
		toolDelta(nil, "", "list", `{}`), // no id at all: continues y
	} {
		a.add(c, nil)
	}
	calls := a.response().Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "x" || calls[0].Function.Arguments != `{"path":"a"}` ||
		calls[1].ID != "y" || calls[1].Function.Arguments != `{"path":"b"}{}` {
		t.Errorf("calls = %+v", calls)
	}

	var b assembler
	b.add(toolDelta(intp(3), "", "read_file", `{}`), nil)
	if calls := b.response().Message.ToolCalls; len(calls) != 1 || calls[0].ID != "call_3" {
		t.Errorf("call without id = %+v, want id call_3", calls)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": " 1.5 "}, 1500 * time.Millisecond, true},
		{map[string]string{"Retry-After": now.Add(20 * time.Second).Format(http.TimeFormat)}, 20 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After-Ms": "soon", "Retry-After": "9"}, 9 * time.Second, true},
		{map[string]string{"Retry-After": "-3"}, 0, false},
		{map[string]string{"Retry-After": "tomorrow"}, 0, false},
		{map[string]string{"Retry-After": "1e300"}, 0, false},
		{map[string]string{}, 0, false},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		got, ok := parseRetryAfter(h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%v: got %v %v, want %v %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}

func TestRetryable(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&openai.APIError{HTTPStatusCode: 429}, true},
		{&openai.APIError{HTTPStatusCode: 408}, true},
		{&openai.APIError{HTTPStatusCode: 409}, true},
		{&openai.APIError{HTTPStatusCode: 529}, true},
		{&openai.APIError{HTTPStatusCode: 400}, false},
		{&openai.APIError{HTTPStatusCode: 401}, false},
		{&openai.RequestError{HTTPStatusCode: 503}, true},
		{&openai.RequestError{HTTPStatusCode: 404}, false},
		{fmt.Errorf("error, %w", &openai.APIError{Type: "server_error", Message: "mid-stream"}), true},
		{fmt.Errorf("error, %w", &openai.APIError{Code: 502, Message: "provider down"}), true},
		{fmt.Errorf("error, %w", &openai.APIError{Type: "invalid_request_error"}), false},
		{io.ErrUnexpectedEOF, true},
		{&url.Error{Op: "Post", URL: "http://x", Err: io.EOF}, true},
		{&url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{&url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", IsNotFound: true}}}, false},
		{fmt.Errorf("wrapped: %w", ErrCallTimeout), true},
		{ErrIncompleteStream, true},
		{errors.New("stream error: stream ID 3; INTERNAL_ERROR; received from peer"), true},
		{openai.ErrTooManyEmptyStreamMessages, false},
		{errors.New("invalid character 'x' looking for beginning of value"), false},
	}
	for _, tc := range cases {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// sseServer serves each request with the next of bodies as an event stream.
func sseServer(t *testing.T, bodies ...string) (*httptest.Server, *int) {
	t.Helper()
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := bodies[min(calls, len(bodies)-1)]
		calls++
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

const (
	sseText   = `data: {"choices":[{"index":0,"delta":{"content":"partial"}}]}` + "\n\n"
	sseFinish = `data: {"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	sseError  = `data: {"error":{"message":"The server had an error","type":"server_error"}}` + "\n\n"
)

func TestStreamWithoutFinishIsIncomplete(t *testing.T) {
	// A clean end of body without a finish reason: a proxy closed early.
	srv, calls := sseServer(t, sseText, sseFinish)
	c := New(Config{BaseURL: srv.URL, Model: "m", Sleep: noSleep})
	req := llm.Request{Messages: []transcript.Message{{Role: "user", Content: "hi"}}}

	resp, err := c.Complete(context.Background(), req, nil)
	if err != nil || resp.Tries != 2 || resp.Message.Content != "done" || *calls != 2 {
		t.Errorf("no listener: resp %+v err %v calls %d, want retried to the clean stream", resp, err, *calls)
	}

	srv, calls = sseServer(t, sseText, sseFinish)
	c = New(Config{BaseURL: srv.URL, Model: "m", Sleep: noSleep})
	var got strings.Builder
	_, err = c.Complete(context.Background(), req, func(d string) { got.WriteString(d) })
	if !errors.Is(err, ErrIncompleteStream) || got.String() != "partial" || *calls != 1 {
		t.Errorf("with listener: err %v text %q calls %d, want ErrIncompleteStream, no retry", err, got.String(), *calls)
	}
}

func TestErrorEventInStream(t *testing.T) {
	srv, calls := sseServer(t, sseError, sseFinish)
	var retried error
	c := New(Config{BaseURL: srv.URL, Model: "m", Sleep: noSleep, OnRetry: func(_ int, err error) { retried = err }})
	req := llm.Request{Messages: []transcript.Message{{Role: "user", Content: "hi"}}}
	resp, err := c.Complete(context.Background(), req, nil)
	if err != nil || resp.Tries != 2 || *calls != 2 {
		t.Fatalf("resp %+v err %v calls %d, want the server_error event retried", resp, err, *calls)
	}
	if retried == nil || retried.Error() != "model call: The server had an error" {
		t.Errorf("OnRetry err = %v", retried)
	}
}
