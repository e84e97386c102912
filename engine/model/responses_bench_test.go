package model_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
	"agentbot/engine/llm"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
)

// benchResponsesModel is a reasoning model: the fake returns an encrypted
// reasoning item with every answer, as OpenAI's do.
const benchResponsesModel = "gpt-5.6-terra"

// benchItem is a plain Responses input message.
type benchItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// benchInput is benchMessages as plain Responses input items.
func benchInput() []benchItem {
	var out []benchItem
	for _, m := range benchMessages() {
		out = append(out, benchItem{Type: "message", Role: m.Role, Content: m.Content})
	}
	return out
}

// BenchmarkBareResponsesCall is the baseline of the Responses adapter:
// go-openai's Responses stream read to the end, with no conversion,
// assembly, retries or bookkeeping.
func BenchmarkBareResponsesCall(b *testing.B) {
	s := benchServer(b)
	c := openai.NewClientWithConfig(s.ClientConfig())
	store := false
	req := openai.CreateResponseRequest{
		Model: benchResponsesModel, Input: benchInput(), Store: &store,
		Include: []openai.ResponseInclude{openai.ResponseIncludeReasoningEncryptedContent},
	}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		stream, err := c.CreateResponseStream(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		var text strings.Builder
		for {
			ev, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			text.WriteString(ev.Delta)
			if ev.Type == openai.ResponseStreamEventCompleted {
				break
			}
		}
		stream.Close()
		if text.Len() == 0 {
			b.Fatal("no text")
		}
	}
}

// BenchmarkResponsesComplete is the same call through model.Client on the
// Responses API.
func BenchmarkResponsesComplete(b *testing.B) {
	s := benchServer(b)
	c := model.New(model.Config{APIKey: "fake-key", BaseURL: s.URL(), Model: benchResponsesModel, API: model.APIResponses})
	req := llm.Request{Messages: benchMessages()}
	ctx := context.Background()
	b.ReportAllocs()
	defer reportCPU(b, cpuTime())
	for b.Loop() {
		resp, err := c.Complete(ctx, req, func(string) {})
		if err != nil {
			b.Fatal(err)
		}
		if resp.Message.Content == "" || resp.Usage.Cached != 4096 || len(resp.Message.ReasoningItems) != 1 {
			b.Fatalf("response = %+v", resp)
		}
	}
}

// BenchmarkResponsesReasoningState runs a ten-turn conversation on top of
// the 100-message transcript, every answer carrying its encrypted
// reasoning item, and reports the reasoning state the last request carries
// back: bytes per turn and its share of the request body.
func BenchmarkResponsesReasoningState(b *testing.B) {
	s := benchServer(b)
	c := model.New(model.Config{APIKey: "fake-key", BaseURL: s.URL(), Model: benchResponsesModel, API: model.APIResponses})
	ctx := context.Background()
	const turns = 10
	var perTurn, share float64
	for b.Loop() {
		msgs := benchMessages()
		for range turns {
			msgs = append(msgs, transcript.Message{Role: transcript.RoleUser, Content: "and then?"})
			resp, err := c.Complete(ctx, llm.Request{Messages: msgs}, nil)
			if err != nil {
				b.Fatal(err)
			}
			msgs = append(msgs, resp.Message)
		}
		msgs = append(msgs, transcript.Message{Role: transcript.RoleUser, Content: "sum up"})
		if _, err := c.Complete(ctx, llm.Request{Messages: msgs}, nil); err != nil {
			b.Fatal(err)
		}
		reqs := s.Requests()
		last := reqs[len(reqs)-1]
		state := 0
		for _, r := range fakemodel.ReasoningSent(last) {
			state += len(r.ID) + len(r.EncryptedContent)
		}
		perTurn, share = float64(state)/turns, 100*float64(state)/float64(len(last.Raw))
	}
	b.ReportMetric(perTurn, "reasoning-B/turn")
	b.ReportMetric(share, "reasoning-%-of-request")
}
