package model

import (
	"net/url"
	"slices"
	"strings"
)

// The wire APIs a Client speaks.
const (
	APIAuto      = "auto"
	APIChat      = "chat"
	APIResponses = "responses"
)

// Efforts are the reasoning efforts AGENTBOT_REASONING_EFFORT may name.
var Efforts = []string{"none", "minimal", "low", "medium", "high", "xhigh"}

// family is what agentbot knows of a model family: which reasoning efforts
// it takes, what it needs for tools to work, and which request fields it
// refuses. A zero family is an unknown model: nothing is assumed, and only
// what the configuration names is sent.
type family struct {
	name string
	// known is set for the families in the table below.
	known bool
	// reasoning models refuse max_tokens (max_completion_tokens instead)
	// and sampling parameters unless their effort is "none".
	reasoning bool
	// efforts are the values of reasoning_effort the family takes; nil
	// for a known family means it takes none and the field is never sent.
	efforts []string
	// chatToolsNeedNone is set when Chat Completions refuses function
	// tools unless reasoning_effort is "none", and the family reasons by
	// default: there the default effort on chat is "none".
	chatToolsNeedNone bool
	// chatToolsRefused is set when Chat Completions refuses function tools
	// whatever the effort: tools need the Responses API.
	chatToolsRefused bool
}

// The effort sets of OpenAI's families. Sources: the reasoning_effort
// reference ("gpt-5.1 defaults to none ... supported values none, low,
// medium, high"; "models before gpt-5.1 default to medium and do not
// support none"; "gpt-5-pro only supports high"; "xhigh is supported for
// all models after gpt-5.1-codex-max"),
// https://learn.microsoft.com/en-us/javascript/api/@azure/ai-projects/reasoningeffort
// and OpenAI's 400 "Unsupported value: 'minimal' is not supported with the
// 'gpt-5.1' model" (openai/openai-agents-python#2089).
var (
	effortsO       = []string{"low", "medium", "high"}
	effortsGPT5    = []string{"minimal", "low", "medium", "high"}
	effortsGPT51   = []string{"none", "low", "medium", "high"}
	effortsGPT52   = []string{"none", "low", "medium", "high", "xhigh"}
	effortsNoNone  = []string{"low", "medium", "high", "xhigh"}
	effortsGPT5Pro = []string{"high"}
)

// families is matched in order against a model name's prefix. gpt-5.4
// and later refuse function tools with a reasoning effort on Chat
// Completions ("Function tools with reasoning_effort are not supported for
// gpt-5.4 in /v1/chat/completions", pipecat-ai/pipecat#4043,
// openai/openai-openapi#541); gpt-5.6 and gpt-6 reason by default, so even
// leaving the field out is refused (GoogleChromeLabs/webmcp-tools#417,
// aaif-goose/goose#11413, decolua/9router#4031); gpt-6-astra and
// gpt-6.1-sol take no "none" at all (go-openai's ReasoningValidator,
// decolua/9router#4031: "'reasoning_effort' does not support 'none'").
var families = []family{
	{name: "gpt-6.1-sol", reasoning: true, efforts: effortsNoNone, chatToolsRefused: true},
	{name: "gpt-6-astra", reasoning: true, efforts: effortsNoNone, chatToolsRefused: true},
	{name: "gpt-6", reasoning: true, efforts: effortsGPT52, chatToolsNeedNone: true},
	{name: "gpt-5.6", reasoning: true, efforts: effortsGPT52, chatToolsNeedNone: true},
	{name: "gpt-5.5", reasoning: true, efforts: effortsGPT52},
	{name: "gpt-5.4", reasoning: true, efforts: effortsGPT52},
	{name: "gpt-5.3", reasoning: true, efforts: effortsGPT52},
	{name: "gpt-5.2", reasoning: true, efforts: effortsGPT52},
	{name: "gpt-5.1", reasoning: true, efforts: effortsGPT51},
	{name: "gpt-5-chat"}, // a chat model: no reasoning parameters
	{name: "gpt-5-pro", reasoning: true, efforts: effortsGPT5Pro},
	{name: "gpt-5", reasoning: true, efforts: effortsGPT5},
	{name: "o1", reasoning: true, efforts: effortsO},
	{name: "o3", reasoning: true, efforts: effortsO},
	{name: "o4", reasoning: true, efforts: effortsO},
	{name: "gpt-4.1"}, // named before gpt-4, which it would match too
	{name: "gpt-4o"},
	{name: "gpt-4"},
	{name: "gpt-3.5"},
	{name: "chatgpt-4o"},
}

// familyOf returns the family of a model name (or of AGENTBOT_MODEL_FAMILY
// for a deployment): its lower-cased name matched against the table. An
// unknown name is an unknown family; so is a router's name such as
// OpenRouter's "openai/gpt-5.6", since the router, not OpenAI, decides
// what its endpoint takes.
func familyOf(name string) family {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, f := range families {
		if strings.HasPrefix(n, f.name) {
			f.known = true
			return f
		}
	}
	return family{name: n}
}

// takes reports whether the family accepts effort (unknown families are
// trusted with whatever the configuration names).
func (f family) takes(effort string) bool {
	if !f.known {
		return true
	}
	return slices.Contains(f.efforts, effort)
}

// effort returns the reasoning effort to send on api, "" for none:
// the configured one when the family takes it, else the one that lets
// tools work on that API.
func (f family) effort(configured, api string) string {
	if configured != "" {
		if f.takes(configured) {
			return configured
		}
		return ""
	}
	if api == APIChat && f.chatToolsNeedNone {
		return "none"
	}
	return ""
}

// samples reports whether the family takes temperature with effort.
func (f family) samples(effort string) bool {
	return !f.reasoning || effort == "none"
}

// needsResponses reports whether auto should pick the Responses API for
// this family: OpenAI's reasoning families, whose reasoning items only the
// Responses API carries between calls and whose newest members refuse
// tools on Chat Completions.
func (f family) needsResponses() bool { return f.reasoning }

// openAIHosted reports whether the configuration talks to OpenAI itself or
// to Azure OpenAI, the providers whose families auto knows.
func openAIHosted(apiType, baseURL string) bool {
	if strings.EqualFold(apiType, "azure") {
		return true
	}
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}
