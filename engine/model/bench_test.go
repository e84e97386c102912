package model_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
)

// benchMessages is a 100-message conversation of about 200 bytes a message.
func benchMessages() []transcript.Message {
	msgs := []transcript.Message{{Role: transcript.RoleSystem, Content: strings.Repeat("You are a product manager. ", 8)}}
	for i := 1; i < 100; i++ {
		role := transcript.RoleUser
		if i%2 == 0 {
			role = transcript.RoleAssistant
		}
		msgs = append(msgs, transcript.Message{Role: role, Content: fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 16))})
	}
	return msgs
}

// benchServer answers every request with a short streamed text and usage.
func benchServer(b *testing.B) *fakemodel.Server {
	s := fakemodel.NewTB(b)
	s.Handle(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "Here is the next step of the workflow.", Chunks: 8, Usage: fakemodel.Usage{Prompt: 5000, Cached: 4096, Completion: 10}}
	})
	return s
}

// benchOpenAIMessages is benchMessages as go-openai's messages.
func benchOpenAIMessages() []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for _, m := range benchMessages() {
		out = append(out, openai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	return out
}

// BenchmarkBareCall is the baseline: go-openai's stream read to the end,
// with no assembly, retries or bookkeeping.
func BenchmarkBareCall(b *testing.B) {
	s := benchServer(b)
	c := openai.NewClientWithConfig(s.ClientConfig())
	req := openai.ChatCompletionRequest{
		Model:         "test-model",
		Messages:      benchOpenAIMessages(),
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		stream, err := c.CreateChatCompletionStream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		var text strings.Builder
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			for _, ch := range chunk.Choices {
				text.WriteString(ch.Delta.Content)
			}
		}
		stream.Close()
		if text.Len() == 0 {
			b.Fatal("no text")
		}
	}
}

// BenchmarkComplete is the same call through model.Client.
func BenchmarkComplete(b *testing.B) {
	s := benchServer(b)
	c := model.New(model.Config{APIKey: "fake-key", BaseURL: s.URL(), Model: "test-model"})
	req := llm.Request{Messages: benchMessages()}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		resp, err := c.Complete(ctx, req, func(string) {})
		if err != nil {
			b.Fatal(err)
		}
		if resp.Message.Content == "" || resp.Usage.Cached != 4096 {
			b.Fatalf("response = %+v", resp)
		}
	}
}

// reasoningSession is benchMessages followed by turns of a DeepSeek-style
// tool loop: each step's assistant message carries reasoning of
// reasoningBytes and two tool calls, each result resultBytes.
func reasoningSession(steps, reasoningBytes, resultBytes int) []transcript.Message {
	msgs := benchMessages()
	for i := range steps {
		if i%3 == 0 {
			msgs = append(msgs, transcript.Message{Role: transcript.RoleUser, Content: fmt.Sprintf("turn %d: go on", i)})
		}
		var calls []transcript.ToolCall
		for j := range 2 {
			calls = append(calls, transcript.ToolCall{ID: fmt.Sprintf("c%02dx%05d", j, i), Type: "function",
				Function: transcript.FunctionCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"/project/f%d.md"}`, j)}})
		}
		msgs = append(msgs, transcript.Message{Role: transcript.RoleAssistant, ToolCalls: calls,
			ReasoningContent: strings.Repeat("I should read the files first. ", reasoningBytes/31+1)[:reasoningBytes]})
		for _, c := range calls {
			msgs = append(msgs, transcript.Message{Role: transcript.RoleTool, ToolCallID: c.ID, Content: strings.Repeat("x", resultBytes)})
		}
	}
	return msgs
}

// BenchmarkDeepSeekReasoningState is a call carrying DeepSeek-style
// reasoning state (12 tool steps of 2 KB reasoning, 1 KB results, over the
// 100-message conversation), against the DeepSeek mode, which refuses the
// request if any of it is missing. It reports the reasoning bytes a
// request carries, per step, and their share of the request body.
func BenchmarkDeepSeekReasoningState(b *testing.B) {
	s := fakemodel.NewTB(b)
	s.SetProvider(fakemodel.DeepSeek)
	s.Handle(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Reasoning: strings.Repeat("think ", 300), Text: "Next step.", Chunks: 8}
	})
	c := model.New(model.Config{APIKey: "fake-key", BaseURL: s.URL(), Model: "deepseek-v4-pro"})
	const steps = 12
	req := llm.Request{Messages: reasoningSession(steps, 2048, 1024)}
	ctx := context.Background()
	resp, err := c.Complete(ctx, req, nil)
	if err != nil {
		b.Fatal(err)
	}
	if resp.Message.ReasoningContent == "" {
		b.Fatal("no reasoning kept")
	}
	carried := 0
	for i := range req.Messages {
		carried += req.Messages[i].ReasoningBytes()
	}
	body := len(s.Requests()[0].Raw)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Complete(ctx, req, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(carried)/steps, "reasoning-B/step")
	b.ReportMetric(float64(carried), "reasoning-B/req")
	b.ReportMetric(100*float64(carried)/float64(body), "reasoning-%-of-req")
}

// reportCPU reports the process CPU time per op since start: client and
// fake server together, but far steadier than wall time on a busy machine,
// so two benchmarks of the same server work compare by their client side.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
