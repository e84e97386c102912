package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// What OpenAI's API enforces per model family, as its documentation and
// public error reports state it. Both the chat endpoint (for OpenAI model
// names) and the Responses endpoint apply these rules.

// openAIFamily is what the fake knows of an OpenAI model name.
type openAIFamily struct {
	name      string
	reasoning bool
	efforts   []string // accepted reasoning efforts; nil: the parameter is refused
	// defaultEffort is the effort applied when none is sent.
	defaultEffort string
	// chatToolsNeedNone: Chat Completions refuses function tools unless
	// the effort is "none".
	chatToolsNeedNone bool
}

// openAIFamilies: efforts from the reasoning_effort reference ("gpt-5.1
// defaults to none ... none, low, medium, high"; "models before gpt-5.1
// default to medium and do not support none"; "xhigh ... after
// gpt-5.1-codex-max",
// https://learn.microsoft.com/en-us/javascript/api/@azure/ai-projects/reasoningeffort);
// the Chat Completions refusal of tools with an effort from gpt-5.4 on
// (pipecat-ai/pipecat#4043, openai/openai-openapi#541), with gpt-5.6 and
// gpt-6 reasoning by default so that even no effort is refused
// (GoogleChromeLabs/webmcp-tools#417, decolua/9router#4031); gpt-6-astra
// takes no "none" (decolua/9router#4031).
var openAIFamilies = []openAIFamily{
	{name: "gpt-6.1-sol", reasoning: true, efforts: []string{"low", "medium", "high", "xhigh"}, defaultEffort: "medium", chatToolsNeedNone: true},
	{name: "gpt-6-astra", reasoning: true, efforts: []string{"low", "medium", "high", "xhigh"}, defaultEffort: "medium", chatToolsNeedNone: true},
	{name: "gpt-6", reasoning: true, efforts: []string{"none", "low", "medium", "high", "xhigh"}, defaultEffort: "medium", chatToolsNeedNone: true},
	{name: "gpt-5.6", reasoning: true, efforts: []string{"none", "low", "medium", "high", "xhigh"}, defaultEffort: "medium", chatToolsNeedNone: true},
	{name: "gpt-5.5", reasoning: true, efforts: []string{"none", "low", "medium", "high", "xhigh"}, defaultEffort: "none", chatToolsNeedNone: true},
	{name: "gpt-5.4", reasoning: true, efforts: []string{"none", "low", "medium", "high", "xhigh"}, defaultEffort: "none", chatToolsNeedNone: true},
	{name: "gpt-5.2", reasoning: true, efforts: []string{"none", "low", "medium", "high", "xhigh"}, defaultEffort: "none"},
	{name: "gpt-5.1", reasoning: true, efforts: []string{"none", "low", "medium", "high"}, defaultEffort: "none"},
	{name: "gpt-5-chat"},
	{name: "gpt-5", reasoning: true, efforts: []string{"minimal", "low", "medium", "high"}, defaultEffort: "medium"},
	{name: "o1", reasoning: true, efforts: []string{"low", "medium", "high"}, defaultEffort: "medium"},
	{name: "o3", reasoning: true, efforts: []string{"low", "medium", "high"}, defaultEffort: "medium"},
	{name: "o4", reasoning: true, efforts: []string{"low", "medium", "high"}, defaultEffort: "medium"},
	{name: "gpt-4"},
}

// openAIFamilyOf returns the family of an OpenAI model name; ok is false
// for any other name (other providers' models, test names).
func openAIFamilyOf(model string) openAIFamily {
	m := strings.ToLower(model)
	for _, f := range openAIFamilies {
		if strings.HasPrefix(m, f.name) {
			return f
		}
	}
	return openAIFamily{}
}

// known reports whether f is an OpenAI family.
func (f openAIFamily) known() bool { return f.name != "" }

// checkEffort refuses an effort the family does not take, with OpenAI's
// messages: "Unsupported value: 'minimal' is not supported with the
// 'gpt-5.1' model. Supported values are: ..." (code unsupported_value,
// openai/openai-agents-python#2089), and "Unsupported parameter:
// 'reasoning_effort' is not supported with this model." for a model
// without reasoning.
func (f openAIFamily) checkEffort(model, effort, param string) *respError {
	if effort == "" || !f.known() {
		return nil
	}
	if len(f.efforts) == 0 {
		return &respError{status: http.StatusBadRequest, code: "unsupported_parameter", param: param,
			message: fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", param)}
	}
	if slices.Contains(f.efforts, effort) {
		return nil
	}
	quoted := make([]string, len(f.efforts))
	for i, e := range f.efforts {
		quoted[i] = "'" + e + "'"
	}
	return &respError{status: http.StatusBadRequest, code: "unsupported_value", param: param,
		message: fmt.Sprintf("Unsupported value: '%s' is not supported with the '%s' model. Supported values are: %s.", effort, model, strings.Join(quoted, ", "))}
}

// checkSampling refuses temperature on a reasoning model that reasons
// ("Unsupported parameter: 'temperature' is not supported with this
// model.", the reasoning guide's limits on sampling parameters,
// https://platform.openai.com/docs/guides/reasoning).
func (f openAIFamily) checkSampling(effort string, hasTemperature bool) *respError {
	if !f.reasoning || !hasTemperature {
		return nil
	}
	if effort == "" {
		effort = f.defaultEffort
	}
	if effort == "none" {
		return nil
	}
	return &respError{status: http.StatusBadRequest, code: "unsupported_parameter", param: "temperature",
		message: "Unsupported parameter: 'temperature' is not supported with this model."}
}

// checkChatOpenAI applies OpenAI's Chat Completions rules for its own model
// names: the family's efforts, max_completion_tokens for reasoning models
// ("Unsupported parameter: 'max_tokens' is not supported with this model.
// Use 'max_completion_tokens' instead.", code unsupported_parameter,
// griptape-ai/ComfyUI-Griptape#312, teilomillet/gollm#33),
// sampling, and the refusal of function tools with a reasoning effort:
// "Function tools with reasoning_effort are not supported for <model> in
// /v1/chat/completions. To use function tools, use /v1/responses or set
// reasoning_effort to 'none'." (param reasoning_effort,
// GoogleChromeLabs/webmcp-tools#417, github/app#2133).
func checkChatOpenAI(req Request) *respError {
	f := openAIFamilyOf(req.Model)
	if !f.known() {
		return nil
	}
	if err := f.checkEffort(req.Model, req.ReasoningEffort, "reasoning_effort"); err != nil {
		return err
	}
	if f.reasoning && req.MaxTokens > 0 {
		return &respError{status: http.StatusBadRequest, code: "unsupported_parameter", param: "max_tokens",
			message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."}
	}
	if err := f.checkSampling(req.ReasoningEffort, hasField(req.Raw, "temperature")); err != nil {
		return err
	}
	effort := req.ReasoningEffort
	if effort == "" {
		effort = f.defaultEffort
	}
	if f.chatToolsNeedNone && len(req.Tools) > 0 && effort != "none" {
		return &respError{status: http.StatusBadRequest, param: "reasoning_effort", message: fmt.Sprintf(
			"Function tools with reasoning_effort are not supported for %s in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.", req.Model)}
	}
	return nil
}

// hasField reports whether the JSON object body has a top-level key.
func hasField(body []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// checkChatReasoning writes the refusal of a chat request that OpenAI's
// rules refuse and reports false; true lets it through.
func (s *Server) checkChatReasoning(w http.ResponseWriter, req Request) bool {
	if err := checkChatOpenAI(req); err != nil {
		writeParamError(w, err)
		return false
	}
	return true
}
