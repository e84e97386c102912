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

// reportCPU reports the process CPU time per op since start: client and
// fake server together, but far steadier than wall time on a busy machine,
// so two benchmarks of the same server work compare by their client side.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
