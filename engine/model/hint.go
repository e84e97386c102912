package model

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
)

// The hints of failed calls: what the person running agentbot can do, in
// the words of its settings. A call's final error gets one (Complete),
// and so does a failed models list (ListModels).

// maxHintModels bounds the models an unknown-model hint names.
const maxHintModels = 10

// listTimeout bounds the models list an unknown-model hint asks for.
const listTimeout = 5 * time.Second

// defaultBaseURL is where go-openai sends requests without a BaseURL.
const defaultBaseURL = "https://api.openai.com/v1"

// isQuota reports whether err is a provider saying the account has no
// quota or credit left, which no retry changes: OpenAI's 429 with type and
// code insufficient_quota ("You exceeded your current quota, please check
// your plan and billing details",
// https://platform.openai.com/docs/guides/error-codes#api-errors; retrying
// it is a known mistake, langchain-ai/langchainjs#1929), and OpenRouter's
// 402 for insufficient credits
// (https://openrouter.ai/docs/api-reference/errors).
func isQuota(err error) bool {
	var api *openai.APIError
	if errors.As(err, &api) {
		if api.Type == "insufficient_quota" || codeString(api.Code) == "insufficient_quota" {
			return true
		}
	}
	return statusOf(err) == http.StatusPaymentRequired
}

// withHint sets the hint of a call's final error. An unknown model's hint
// names the models the endpoint offers, so it lists them (one short try).
func (c *Client) withHint(ctx context.Context, api string, err error) error {
	var e *llm.Error
	if !errors.As(err, &e) || e.Hint != "" {
		return err
	}
	e.Hint = c.statusHint(e)
	if e.Hint == "" {
		e.Hint = c.networkHint(e.Err)
	}
	if e.Hint == "" && e.Status == http.StatusNotFound {
		e.Hint = c.notFoundHint(ctx, api, e)
	}
	return err
}

// statusHint is the hint for what the provider answered, "" when its
// status and words say nothing the hints know.
func (c *Client) statusHint(e *llm.Error) string {
	msg := strings.ToLower(e.Message + " " + e.Detail)
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		if c.azure {
			return "the endpoint refused the API key: check OPENAI_API_KEY (the Azure resource's key) and OPENAI_API_TYPE=azure"
		}
		return "the endpoint refused the API key: check OPENAI_API_KEY (a key of this provider, for OPENAI_BASE_URL " + c.baseURL() + ")"
	case e.Code == "insufficient_quota" || e.Type == "insufficient_quota" || e.Status == http.StatusPaymentRequired:
		return "the account is out of quota or credit, so the call was not retried: check the plan and billing at the provider"
	case e.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("the provider's rate limit (tried %d times): wait a minute, lower AGENTBOT_MAX_CONCURRENT_TURNS, or raise the account's limits", max(e.Tries, 1))
	case e.Status == http.StatusMethodNotAllowed:
		return c.baseURLHint()
	case strings.Contains(msg, "stream_options"):
		return "the server refuses stream_options: with azure, set OPENAI_API_VERSION to " + DefaultAzureAPIVersion + " or later"
	case strings.Contains(msg, "/v1/responses"):
		return "this model needs the Responses API for tools: set AGENTBOT_API=auto or responses"
	case e.Status == http.StatusBadRequest && (strings.Contains(msg, "reasoning") || strings.Contains(msg, "effort")):
		return "check AGENTBOT_REASONING_EFFORT against what the model takes, or leave it empty"
	}
	return ""
}

// networkHint is the hint for a call that got no answer: nothing listens
// at the base URL, its host is unknown, or it did not answer in time.
func (c *Client) networkHint(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrNotAnAPI):
		return c.baseURLHint()
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("the host of %s was not found: check OPENAI_BASE_URL for a typo", c.baseURL())
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Sprintf("nothing answers at %s: check OPENAI_BASE_URL and that the model server runs, on that port", c.baseURL())
	case errors.Is(err, ErrCallTimeout):
		return fmt.Sprintf("no answer from %s within %s: the server is busy or slow (raise AGENTBOT_CALL_TIMEOUT for slow local models)", c.baseURL(), c.cfg.CallTimeout)
	case errors.As(err, &op):
		return fmt.Sprintf("could not reach %s (%s): check OPENAI_BASE_URL and the network", c.baseURL(), op.Err)
	}
	return ""
}

// notFoundHint tells an unknown model (the provider names it, or says
// model_not_found; the hint lists what the endpoint offers) from a base URL
// that is not an OpenAI-compatible API (a body that is not an API error,
// OpenAI's "Invalid URL"), or one without the Responses API. A 404 that
// says neither names both settings.
func (c *Client) notFoundHint(ctx context.Context, api string, e *llm.Error) string {
	msg := e.Message + " " + e.Detail
	lower := strings.ToLower(msg)
	switch {
	case e.Code == "DeploymentNotFound" || (c.azure && strings.Contains(msg, c.cfg.Model)):
		return fmt.Sprintf("no deployment %q at %s: set AGENTBOT_MODEL to the deployment's name, as the Azure portal shows it", c.cfg.Model, c.baseURL())
	case e.Code == "model_not_found" || strings.Contains(msg, c.cfg.Model):
		return fmt.Sprintf("the endpoint does not offer the model %q: check AGENTBOT_MODEL%s", c.cfg.Model, c.offered(ctx))
	case api == APIResponses:
		return "the endpoint has no Responses API: set AGENTBOT_API=chat, or check OPENAI_BASE_URL " + c.baseURL()
	case e.Message == "" || strings.Contains(lower, "invalid url") || strings.Contains(lower, "no route"):
		return c.baseURLHint()
	}
	return fmt.Sprintf("check AGENTBOT_MODEL (with azure: the deployment name) and OPENAI_BASE_URL %s%s", c.baseURL(), c.offered(ctx))
}

// offered is "; it offers a, b" with up to maxHintModels the endpoint
// lists, "" when it lists none (one short try).
func (c *Client) offered(ctx context.Context) string {
	if ctx.Err() != nil {
		return ""
	}
	lctx, cancel := context.WithTimeout(ctx, min(listTimeout, c.cfg.CallTimeout))
	defer cancel()
	ids, err := c.ListModels(lctx)
	switch {
	case err != nil || len(ids) == 0:
		return ""
	case len(ids) > maxHintModels:
		return fmt.Sprintf("; it offers %s and %d more (agentbot check lists them)", strings.Join(ids[:maxHintModels], ", "), len(ids)-maxHintModels)
	}
	return "; it offers " + strings.Join(ids, ", ")
}

// baseURLHint says the base URL is not an OpenAI-compatible API.
func (c *Client) baseURLHint() string {
	return fmt.Sprintf("OPENAI_BASE_URL %s does not look like an OpenAI-compatible API: it usually ends in /v1 (https://api.openai.com/v1, http://localhost:11434/v1)", c.baseURL())
}

// baseURL is the configured base URL, or OpenAI's.
func (c *Client) baseURL() string {
	if c.cfg.BaseURL == "" {
		return defaultBaseURL
	}
	return c.cfg.BaseURL
}
