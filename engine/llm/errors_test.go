package llm_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"agentbot/engine/llm"
)

func TestErrorText(t *testing.T) {
	cases := []struct {
		err  *llm.Error
		want string
	}{
		{&llm.Error{Status: 500, Tries: 3, Message: "boom"}, "model call: status 500 after 3 tries: boom"},
		{&llm.Error{Status: 502, Detail: "<html>bad gateway</html>"}, "model call: status 502: <html>bad gateway</html>"},
		{&llm.Error{Message: "Provider returned error", Detail: "upstream: overloaded"}, "model call: Provider returned error (upstream: overloaded)"},
		{&llm.Error{Partial: true, Tries: 1, Err: errors.New("reset")}, "model call: stream broke after partial output: reset"},
		{&llm.Error{}, "model call: unknown error"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	e := &llm.Error{Err: context.Canceled}
	if !errors.Is(fmt.Errorf("turn: %w", e), context.Canceled) {
		t.Error("the cause is not unwrapped")
	}
}

func TestContextLength(t *testing.T) {
	cases := []struct {
		err    error
		is     bool
		window int
	}{
		{&llm.Error{Status: 400, Code: "context_length_exceeded", Message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."}, true, 8192},
		{fmt.Errorf("turn: %w", &llm.Error{Status: 400, Message: "prompt is too long: 210000 tokens > 200000 maximum"}), true, 0},
		{&llm.Error{Status: 400, Detail: `{"error":"the request exceeds the available context window"}`}, true, 0},
		{&llm.Error{Status: 400, Message: "invalid tool schema"}, false, 0},
		{errors.New("maximum context length is 4096"), false, 0}, // not our error type
	}
	for i, c := range cases {
		if got := llm.IsContextLength(c.err); got != c.is {
			t.Errorf("%d: IsContextLength = %v, want %v", i, got, c.is)
		}
		n, ok := llm.ContextWindow(c.err)
		if n != c.window || ok != (c.window > 0) {
			t.Errorf("%d: ContextWindow = %d %v, want %d", i, n, ok, c.window)
		}
	}
}
