package model

import (
	"errors"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
)

// apiFor returns the API the next call of the client's model goes to: the
// one a provider asked for, else the configured one, else auto's pick.
func (c *Client) apiFor() string {
	c.mu.Lock()
	api, ok := c.switched[c.cfg.Model]
	c.mu.Unlock()
	if ok {
		return api
	}
	switch c.cfg.API {
	case APIChat, APIResponses:
		return c.cfg.API
	}
	if openAIHosted(c.cfg.APIType, c.cfg.BaseURL) && c.fam.needsResponses() {
		return APIResponses
	}
	return APIChat
}

// otherAPI is the API that is not api.
func otherAPI(api string) string {
	if api == APIResponses {
		return APIChat
	}
	return APIResponses
}

// switchAPI reports whether a call that failed on api with err is to be
// made again on the other API: only in auto, only when the provider said
// the model needs the other API, only before any text was shown, and only
// once per model. The switch is remembered for the model and logged.
func (c *Client) switchAPI(api string, err error) bool {
	if c.cfg.API != "" && c.cfg.API != APIAuto {
		return false
	}
	var e *llm.Error
	if !errors.As(err, &e) || e.Partial || !wantsOtherAPI(api, e) {
		return false
	}
	to := otherAPI(api)
	c.mu.Lock()
	if _, done := c.switched[c.cfg.Model]; done {
		c.mu.Unlock()
		return false
	}
	if c.switched == nil {
		c.switched = map[string]string{}
	}
	c.switched[c.cfg.Model] = to
	c.mu.Unlock()
	c.cfg.Logger.Info("model API switched: the provider asked for the other API", "model", c.cfg.Model,
		"from", api, "to", to, "status", e.Status, "reason", e.Describe())
	return true
}

// wantsOtherAPI reports whether e says the request belongs on the other
// API:
//   - on Chat Completions, go-openai's own refusal ("tool calling with this
//     model and reasoning effort requires the Responses API", gpt-6), or
//     OpenAI's 400 "Function tools with reasoning_effort are not supported
//     for <model> in /v1/chat/completions. To use function tools, use
//     /v1/responses ..." (GoogleChromeLabs/webmcp-tools#417,
//     pipecat-ai/pipecat#4043 "Please use /v1/responses instead");
//   - on Responses, a 400 that names /v1/chat/completions as the place for
//     the model, or a 404/405 for the /responses route itself from a
//     server that has none.
func wantsOtherAPI(api string, e *llm.Error) bool {
	msg := strings.ToLower(e.Describe())
	if api == APIChat {
		return errors.Is(e, openai.ErrReasoningToolsRequireResponses) ||
			(e.Status == http.StatusBadRequest && strings.Contains(msg, "/v1/responses"))
	}
	switch e.Status {
	case http.StatusBadRequest:
		return strings.Contains(msg, "chat/completions")
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return e.Code != "DeploymentNotFound" && e.Code != "model_not_found"
	}
	return false
}
