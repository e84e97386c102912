package model_test

import (
	"context"
	"errors"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
)

// Groq's tool_use_failed inside a 200 stream (the model's tool-call
// generation did not parse) is retried like a transient error: the next
// generation is the answer, and the failed one is never part of it. It is
// bounded: after MaxTries failures the call fails with Groq's code.
func TestGroqToolUseFailedRetried(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.SetProvider(fakemodel.Groq)
	failed := `<function=save_output{"path":"prd.md","content":"never"}</function>`
	s.Enqueue(fakemodel.Reply{FailedGeneration: failed},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: `{"path":"/outputs/a.md"}`}}})
	c, sl := newClient(s, nil)
	resp, err := c.Complete(context.Background(), userRequest("hi"), nil)
	if err != nil {
		t.Fatalf("tool_use_failed was not retried: %v", err)
	}
	if resp.Tries != 2 || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Function.Name != "read_file" || resp.Message.Content != "" {
		t.Fatalf("after the retry: tries %d, message %+v; want the second generation alone", resp.Tries, resp.Message)
	}
	if len(sl.all()) != 1 {
		t.Errorf("waits between tries = %v, want one backoff", sl.all())
	}

	s.Enqueue(fakemodel.Reply{FailedGeneration: failed}, fakemodel.Reply{FailedGeneration: failed}, fakemodel.Reply{FailedGeneration: failed},
		fakemodel.Reply{Text: "a fourth try is not made"})
	calls := s.Calls()
	_, err = c.Complete(context.Background(), userRequest("hi"), nil)
	var le *llm.Error
	if !errors.As(err, &le) || le.Code != "tool_use_failed" || le.Tries != model.DefaultMaxTries {
		t.Fatalf("three failures: %v, want Groq's tool_use_failed after %d tries", err, model.DefaultMaxTries)
	}
	if n := s.Calls() - calls; n != model.DefaultMaxTries {
		t.Fatalf("%d requests for a call, want %d", n, model.DefaultMaxTries)
	}
}
