// Package model holds the wire adapters of the engine's model boundary
// (engine/llm): OpenAI-compatible Chat Completions and the OpenAI Responses
// API, both through go-openai, both streaming, with tool calls assembled
// from their deltas, retries with jittered backoff that honours
// Retry-After, and usage. A Client picks the API per model (Config.API) and
// converts at its edge; nothing else sees go-openai's types.
package model

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
	"agentbot/engine/retry"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxTries    = 3
	DefaultCallTimeout = 2 * time.Minute
	DefaultBaseBackoff = 500 * time.Millisecond
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
	// API is the wire API: "auto" (the default: Responses for OpenAI's and
	// Azure's reasoning families, Chat Completions otherwise), "chat" or
	// "responses". In auto, a provider's answer that the model needs the
	// other API switches to it once, remembered for the model.
	API string
	// Family names the model's family when Model does not say it (an
	// Azure deployment name): "gpt-5.6", "o3", "gpt-4.1". Empty: Model.
	Family string
	// ReasoningEffort (none, minimal, low, medium, high, xhigh) is sent to
	// models whose family takes it; a family known to refuse the value
	// never gets it. Empty: the family's default that lets tools work.
	ReasoningEffort string
	// Temperature is sent when set, 0 included, unless the family refuses
	// sampling parameters at its reasoning effort.
	Temperature *float32
	// MaxTokens caps the completion when > 0: max_tokens on Chat
	// Completions, max_completion_tokens for the reasoning families (and
	// the models go-openai knows to refuse max_tokens), max_output_tokens on
	// the Responses API.
	MaxTokens int
	// Logger is told of an API switch (nil: slog.Default()).
	Logger *slog.Logger
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
	cfg     Config
	api     *openai.Client // Chat Completions: request building, models list
	respAPI *openai.Client // Responses (Azure's lives at /openai/v1)
	http    *http.Client   // sends the chat requests (see sse.go)
	url     string         // the chat completions endpoint
	azure   bool
	fam     family
	err     error // a configuration error, reported by every call

	mu       sync.Mutex
	switched map[string]string // model -> the API a provider asked for
}

// DefaultAzureAPIVersion is the api-version sent to Azure OpenAI's Chat
// Completions when none is configured: a GA version that takes
// stream_options (go-openai's own default, 2023-05-15, refuses it, so
// streamed usage would fail). Azure's Responses API is its v1 API, which
// needs none.
const DefaultAzureAPIVersion = "2024-10-21"

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
		cfg.Sleep = retry.Sleep
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{} // no Timeout: CallTimeout bounds each attempt
	}

	var oc, rc openai.ClientConfig
	var err error
	switch strings.ToLower(cfg.APIType) {
	case "", "openai":
		oc = openai.DefaultConfig(cfg.APIKey)
		if cfg.BaseURL != "" {
			oc.BaseURL = cfg.BaseURL
		}
		rc = oc
	case "azure":
		oc = openai.DefaultAzureConfig(cfg.APIKey, cfg.BaseURL)
		oc.APIVersion = cmp.Or(cfg.APIVersion, DefaultAzureAPIVersion)
		oc.AzureModelMapperFunc = func(m string) string { return m } // Model is the deployment name
		// Azure serves the Responses API only on its OpenAI-compatible v1
		// surface, POST {endpoint}/openai/v1/responses, with the deployment
		// as the model (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/how-to/responses).
		rc = openai.DefaultConfig(cfg.APIKey)
		rc.BaseURL = strings.TrimRight(cfg.BaseURL, "/") + "/openai/v1"
		if cfg.BaseURL == "" {
			err = fmt.Errorf("%w: azure needs a BaseURL (https://<resource>.openai.azure.com)", ErrConfig)
		}
	default:
		err = fmt.Errorf("%w: unknown API type %q (want openai or azure)", ErrConfig, cfg.APIType)
	}
	if err == nil && cfg.Model == "" {
		err = fmt.Errorf("%w: no model configured", ErrConfig)
	}
	if err == nil {
		err = checkAPI(cfg)
	}
	doer := &headerDoer{inner: httpClient}
	oc.HTTPClient = doer
	rc.HTTPClient = doer
	if strings.EqualFold(cfg.APIType, "azure") {
		rc.HTTPClient = &headerDoer{inner: httpClient, apiKey: cfg.APIKey}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	azure := oc.APIType == openai.APITypeAzure
	return &Client{cfg: cfg, api: openai.NewClientWithConfig(oc), respAPI: openai.NewClientWithConfig(rc),
		http: httpClient, azure: azure, url: chatURL(oc.BaseURL, cfg.Model, oc.APIVersion, azure),
		fam: familyOf(cmp.Or(cfg.Family, cfg.Model)), err: err}
}

// checkAPI refuses an unknown API or reasoning effort, and a base URL
// requests cannot go to.
func checkAPI(cfg Config) error {
	switch cfg.API {
	case "", APIAuto, APIChat, APIResponses:
	default:
		return fmt.Errorf("%w: unknown API %q (want auto, chat or responses)", ErrConfig, cfg.API)
	}
	if cfg.ReasoningEffort != "" && !slices.Contains(Efforts, cfg.ReasoningEffort) {
		return fmt.Errorf("%w: unknown reasoning effort %q (want one of %s)", ErrConfig, cfg.ReasoningEffort, strings.Join(Efforts, ", "))
	}
	return checkBaseURL(cfg.BaseURL)
}

// checkBaseURL refuses a base URL that requests cannot go to: one without
// an http or https scheme ("localhost:11434/v1") or without a host. Empty
// is OpenAI's.
func checkBaseURL(base string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: base URL %q is not an http or https URL with a host (e.g. https://api.openai.com/v1 or http://localhost:11434/v1)", ErrConfig, base)
	}
	return nil
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
	api := c.apiFor()
	resp, err := c.call(ctx, api, req, onText)
	if err != nil && c.switchAPI(api, err) {
		api = otherAPI(api)
		resp, err = c.call(ctx, api, req, onText)
	}
	if err != nil {
		return nil, c.withHint(ctx, api, err)
	}
	return resp, nil
}

// call makes one call on api, with retries.
func (c *Client) call(ctx context.Context, api string, req llm.Request, onText func(string)) (*llm.Response, error) {
	if api == APIResponses {
		rreq := c.responsesRequest(req)
		return c.retry(ctx, func(ctx context.Context) (*llm.Response, attemptResult) {
			return c.attemptResponses(ctx, rreq, onText, req.OnReasoning)
		})
	}
	creq := c.request(req)
	// The chat request is sent by this adapter (sse.go), so go-openai's
	// own refusal of a request it knows the model refuses is asked here.
	if err := openai.NewReasoningValidator().Validate(creq); errors.Is(err, openai.ErrReasoningToolsRequireResponses) {
		return nil, c.fail(err, 0, 0, false)
	}
	body, err := requestBody(creq, toWireMessages(req.Messages, styleOf(c.cfg.Model, req.Messages)))
	if err == nil && c.sendsZeroTemperature(creq.ReasoningEffort) {
		body, err = withZeroTemperature(body)
	}
	if err != nil {
		return nil, c.fail(err, 0, 0, false)
	}
	return c.retry(ctx, func(ctx context.Context) (*llm.Response, attemptResult) {
		return c.attempt(ctx, body, onText, req.OnReasoning)
	})
}

// retry runs attempt until it succeeds, fails for good or runs out of tries.
func (c *Client) retry(ctx context.Context, attempt func(context.Context) (*llm.Response, attemptResult)) (*llm.Response, error) {
	var resp *llm.Response
	tries := 0
	p := retry.Policy{MaxAttempts: c.cfg.MaxTries, Base: c.cfg.BaseBackoff, Max: maxBackoff, Sleep: c.cfg.Sleep}
	if c.cfg.OnRetry != nil {
		p.OnRetry = func(try int, err error, _ time.Duration) { c.cfg.OnRetry(try, err) }
	}
	err := p.Do(ctx, func(try int) error {
		tries = try
		r, a := c.timed(ctx, attempt)
		if a.err == nil {
			resp, r.Tries = r, try
			return nil
		}
		if ctx.Err() != nil {
			return retry.Stop(c.fail(ctx.Err(), try, 0, a.emitted))
		}
		status := statusOf(a.err)
		if a.emitted || !retryable(a.err) || try >= c.cfg.MaxTries {
			return retry.Stop(c.fail(a.err, try, status, a.emitted))
		}
		if a.retryAfter > maxRetryAfter {
			return retry.Stop(c.fail(&retryAfterError{after: a.retryAfter, err: a.err}, try, status, false))
		}
		return retry.After(c.fail(a.err, try, status, false), a.retryAfter)
	})
	if err == nil {
		return resp, nil
	}
	if _, ok := err.(*llm.Error); !ok { // the wait between tries was cut short
		return nil, c.fail(err, tries, 0, false)
	}
	return nil, err
}

// request builds the go-openai Chat Completions request for req.
func (c *Client) request(req llm.Request) openai.ChatCompletionRequest {
	creq := openai.ChatCompletionRequest{
		Model:         c.cfg.Model,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if len(req.Tools) > 0 {
		creq.Tools = toOpenAITools(req.Tools)
	}
	creq.ReasoningEffort = c.fam.effort(c.cfg.ReasoningEffort, APIChat)
	if t := c.cfg.Temperature; t != nil && c.fam.samples(creq.ReasoningEffort) {
		creq.Temperature = *t // 0 is omitted by go-openai: see withZeroTemperature
	}
	if c.cfg.MaxTokens > 0 {
		creq.MaxTokens = c.cfg.MaxTokens
		// The family (an Azure deployment's, too) or go-openai's own model
		// rules say whether max_tokens is refused.
		probe := creq
		probe.Model = cmp.Or(c.cfg.Family, c.cfg.Model)
		if c.fam.reasoning || errors.Is(openai.NewReasoningValidator().Validate(probe), openai.ErrReasoningModelMaxTokensDeprecated) {
			creq.MaxTokens, creq.MaxCompletionTokens = 0, c.cfg.MaxTokens
		}
	}
	return creq
}

// sendsZeroTemperature reports whether a configured temperature of 0 is to
// be sent on Chat Completions at effort.
func (c *Client) sendsZeroTemperature(effort string) bool {
	t := c.cfg.Temperature
	return t != nil && *t == 0 && c.fam.samples(effort)
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
		e := c.fail(err, 1, statusOf(err), false)
		if e.Status != http.StatusNotFound { // no models list: no hint needed
			_ = c.withHint(ctx, APIChat, e)
		}
		return nil, e
	}
	ids := make([]string, 0, len(list.Models))
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	return ids, nil
}
