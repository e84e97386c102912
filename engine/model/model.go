// Package model calls an OpenAI-compatible chat completions endpoint with
// go-openai: streaming, tool-call deltas assembled by index, retries with
// jittered backoff that honours Retry-After, and usage.
package model

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
)

// Defaults for the zero values of Config.
const (
	// DefaultAzureAPIVersion is the api-version sent to Azure when none is
	// configured: a GA version that takes stream_options (go-openai's own
	// default, 2023-05-15, refuses it, and so every streamed call):
	// https://learn.microsoft.com/azure/ai-foundry/openai/api-version-lifecycle
	DefaultAzureAPIVersion = "2024-10-21"
	DefaultMaxTries        = 3
	DefaultCallTimeout     = 2 * time.Minute
	DefaultBaseBackoff     = 500 * time.Millisecond
)

// Config configures a Client.
type Config struct {
	APIKey  string
	BaseURL string // empty means OpenAI
	// Model is the model id; with azure it is the deployment name, used as is.
	Model string
	// APIType is "openai" (default) or "azure"; APIVersion goes with azure.
	// OpenRouter, Ollama and vLLM are "openai" with their BaseURL.
	APIType    string
	APIVersion string
	// Temperature is sent when set. go-openai omits a zero temperature, so
	// 0 means the provider's default.
	Temperature *float32
	// MaxTokens caps the completion when > 0. It is sent as max_tokens, the
	// field every OpenAI-compatible server understands, except for models
	// go-openai knows to reject it (OpenAI's o-series and gpt-5 and later),
	// which get max_completion_tokens.
	MaxTokens int
	// MaxTries is the number of attempts per call (default 3).
	MaxTries int
	// CallTimeout bounds one attempt (default 2 minutes).
	CallTimeout time.Duration
	// BaseBackoff is the first retry delay before jitter (default 500ms).
	BaseBackoff time.Duration
	// HTTPClient sends the requests (nil means a plain &http.Client{}). Its
	// own Timeout, if set, also bounds each attempt, stream included.
	HTTPClient *http.Client
	// OnRetry, when set, is told of every retry, before the wait: attempt is
	// the 1-based number of the attempt that failed, err its error (a
	// *llm.Error, safe to log).
	OnRetry func(attempt int, err error)
	// Sleep waits between attempts; nil means a timer. It must return
	// ctx.Err() when ctx ends first. Tests set it to skip real waits and to
	// see the delays chosen.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client is a model client. It is safe for concurrent use.
type Client struct {
	cfg   Config
	api   *openai.Client
	http  *http.Client // sends the chat requests (see sse.go)
	url   string       // the chat completions endpoint
	azure bool
	err   error // a configuration error, reported by every call
}

// ErrConfig marks a configuration the client refuses before any request.
var ErrConfig = errors.New("bad model configuration")

// New returns a client for cfg. A bad cfg (unknown APIType, azure without
// BaseURL, no Model) is reported by Complete.
func New(cfg Config) *Client {
	if cfg.MaxTries <= 0 {
		cfg.MaxTries = DefaultMaxTries
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.BaseBackoff <= 0 {
		cfg.BaseBackoff = DefaultBaseBackoff
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{} // no Timeout: CallTimeout bounds each attempt
	}

	var oc openai.ClientConfig
	var err error
	switch strings.ToLower(cfg.APIType) {
	case "", "openai":
		oc = openai.DefaultConfig(cfg.APIKey)
		if cfg.BaseURL != "" {
			oc.BaseURL = cfg.BaseURL
		}
	case "azure":
		oc = openai.DefaultAzureConfig(cfg.APIKey, cfg.BaseURL)
		oc.APIVersion = DefaultAzureAPIVersion
		if cfg.APIVersion != "" {
			oc.APIVersion = cfg.APIVersion
		}
		oc.AzureModelMapperFunc = func(m string) string { return m } // Model is the deployment name
		if cfg.BaseURL == "" {
			err = fmt.Errorf("%w: azure needs a BaseURL (https://<resource>.openai.azure.com)", ErrConfig)
		}
	default:
		err = fmt.Errorf("%w: unknown API type %q (want openai or azure)", ErrConfig, cfg.APIType)
	}
	if err == nil && cfg.Model == "" {
		err = fmt.Errorf("%w: no model configured", ErrConfig)
	}
	oc.HTTPClient = &headerDoer{inner: httpClient}
	azure := oc.APIType == openai.APITypeAzure
	return &Client{cfg: cfg, api: openai.NewClientWithConfig(oc), http: httpClient, azure: azure,
		url: chatURL(oc.BaseURL, cfg.Model, oc.APIVersion, azure), err: err}
}

// Complete streams one completion, calling onText with each text delta (it
// may be nil), and returns the assembled message.
//
// Failed attempts are retried (up to MaxTries) on HTTP 408, 409, 429 and
// 5xx, on network errors, on a per-attempt timeout and on a stream that ends
// without a finish reason, waiting a jittered exponential backoff or the
// server's Retry-After, whichever is longer. An attempt that has already
// passed text to onText is not retried, since a retry would repeat that
// text: its error is returned with Partial set. Errors are *llm.Error.
func (c *Client) Complete(ctx context.Context, req llm.Request, onText func(delta string)) (*llm.Response, error) {
	if c == nil || c.api == nil {
		return nil, &llm.Error{Err: errors.New("nil client (use model.New)")}
	}
	if c.err != nil {
		return nil, c.fail(c.err, 0, 0, false)
	}
	if len(req.Messages) == 0 {
		return nil, c.fail(errors.New("no messages"), 0, 0, false)
	}
	body, err := requestBody(c.request(req), toWireMessages(req.Messages, styleOf(c.cfg.Model, req.Messages)))
	if err != nil {
		return nil, c.fail(err, 0, 0, false)
	}
	for try := 1; ; try++ {
		resp, a := c.attempt(ctx, body, onText)
		if a.err == nil {
			resp.Tries = try
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, c.fail(ctx.Err(), try, 0, a.emitted)
		}
		status := statusOf(a.err)
		if a.emitted || !retryable(a.err) || try >= c.cfg.MaxTries {
			return nil, c.fail(a.err, try, status, a.emitted)
		}
		delay := backoff(c.cfg.BaseBackoff, try)
		if a.retryAfter > maxRetryAfter {
			return nil, c.fail(&retryAfterError{after: a.retryAfter, err: a.err}, try, status, false)
		}
		delay = max(delay, a.retryAfter)
		if c.cfg.OnRetry != nil {
			c.cfg.OnRetry(try, c.fail(a.err, try, status, false))
		}
		if err := c.cfg.Sleep(ctx, delay); err != nil {
			return nil, c.fail(err, try, 0, false)
		}
	}
}

// request builds the go-openai request for req.
func (c *Client) request(req llm.Request) openai.ChatCompletionRequest {
	creq := openai.ChatCompletionRequest{
		Model:         c.cfg.Model,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if len(req.Tools) > 0 {
		creq.Tools = toOpenAITools(req.Tools)
	}
	if c.cfg.Temperature != nil {
		creq.Temperature = *c.cfg.Temperature
	}
	if c.cfg.MaxTokens > 0 {
		creq.MaxTokens = c.cfg.MaxTokens
		// Ask go-openai's own model rules whether max_tokens is refused.
		if errors.Is(openai.NewReasoningValidator().Validate(creq), openai.ErrReasoningModelMaxTokensDeprecated) {
			creq.MaxTokens, creq.MaxCompletionTokens = 0, c.cfg.MaxTokens
		}
	}
	return creq
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ListModels returns the ids of the models the endpoint lists (one try, no
// retries: it is a health check). Errors are *llm.Error, so callers can
// read the HTTP status.
func (c *Client) ListModels(ctx context.Context) ([]string, error) {
	if c.err != nil {
		return nil, c.err
	}
	list, err := c.api.ListModels(ctx)
	if err != nil {
		return nil, c.fail(err, 1, statusOf(err), false)
	}
	ids := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	return ids, nil
}
