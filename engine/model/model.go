// Package model calls an OpenAI-compatible chat completions endpoint with
// go-openai: streaming, tool-call deltas assembled by index, retries with
// jittered backoff that honours Retry-After, and usage.
package model

import (
	"context"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Config configures a Client.
type Config struct {
	APIKey  string
	BaseURL string // empty means OpenAI
	Model   string
	// APIType is "openai" (default) or "azure"; APIVersion goes with azure.
	APIType     string
	APIVersion  string
	Temperature *float32
	MaxTokens   int
	// MaxTries is the number of attempts per call (default 3).
	MaxTries int
	// CallTimeout bounds one attempt (default 2 minutes).
	CallTimeout time.Duration
	// BaseBackoff is the first retry delay before jitter (default 500ms).
	BaseBackoff time.Duration
	HTTPClient  *http.Client
	// OnRetry, when set, is told of every retry.
	OnRetry func(attempt int, err error)
}

// Request is one chat completion request.
type Request struct {
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
}

// Usage counts tokens of one call.
type Usage struct {
	Prompt     int `json:"prompt"`
	Cached     int `json:"cached"`
	Completion int `json:"completion"`
}

// Response is the assembled reply of one call.
type Response struct {
	Message      openai.ChatCompletionMessage
	FinishReason string
	Usage        Usage
	Tries        int
}

// Client is a model client.
type Client struct{}

// New returns a client for cfg.
func New(cfg Config) *Client { panic("todo") }

// Complete streams one completion, calling onText with each text delta (it
// may be nil), and returns the assembled message.
func (c *Client) Complete(ctx context.Context, req Request, onText func(delta string)) (*Response, error) {
	panic("todo")
}
