package fakemodel_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
)

// A test scripts a reply, drives the real go-openai client against the
// server and then looks at what the client sent.
func Example() {
	s := fakemodel.New()
	defer s.Close()
	s.Enqueue(fakemodel.Reply{Text: "Hello, Ada!", Chunks: 2})

	c := openai.NewClientWithConfig(s.ClientConfig())
	stream, err := c.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model:    "any-model",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "I am Ada"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stream.Close()
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, ch := range chunk.Choices {
			if ch.Delta.Content != "" {
				fmt.Printf("delta %q\n", ch.Delta.Content)
			}
		}
	}
	fmt.Println("calls:", s.Calls(), "asked:", s.Requests()[0].LastUserText())
	// Output:
	// delta "Hello"
	// delta ", Ada!"
	// calls: 1 asked: I am Ada
}
