package model

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// Finding is one result of Check: what was checked, how it went ("ok",
// "warn" or "fail"), what was seen and, when it is not ok, how to fix it.
type Finding struct {
	Name   string
	Status string
	Detail string
	Hint   string
}

// The statuses of a Finding.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// probeTool is the one tool of the check's tool call.
var probeTool = llm.Tool{
	Name:        "probe_echo",
	Description: "Echoes a word back. Call it when asked to.",
	Parameters:  []byte(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
}

// Check tries the model for real, as the engine will use it: Azure's
// api-version, then one tiny request with one tool on the configured API
// (auto switches as it would in use), then one tiny streamed text answer.
// It reports the API used, tool calls, streaming, usage and reasoning,
// each with a hint when it fails. Errors never carry the API key.
func (c *Client) Check(ctx context.Context) []Finding {
	if c.err != nil {
		return []Finding{{Name: "model configuration", Status: CheckFail, Detail: c.err.Error(),
			Hint: "set OPENAI_API_TYPE, OPENAI_BASE_URL, AGENTBOT_MODEL, AGENTBOT_API and AGENTBOT_REASONING_EFFORT to valid values"}}
	}
	var out []Finding
	if strings.EqualFold(c.cfg.APIType, "azure") {
		out = append(out, c.checkAzureVersion())
	}
	before := c.apiFor()
	toolResp, toolErr := c.Complete(ctx, llm.Request{Messages: []transcript.Message{
		{Role: transcript.RoleSystem, Content: "You are a connectivity probe. Do exactly what the user asks."},
		{Role: transcript.RoleUser, Content: `Call the probe_echo tool with {"word":"ok"}. Do not answer in text.`},
	}, Tools: []llm.Tool{probeTool}}, nil)
	out = append(out, c.checkAPI(before), c.checkTools(toolResp, toolErr))
	deltas := 0
	textResp, textErr := c.Complete(ctx, llm.Request{Messages: []transcript.Message{
		{Role: transcript.RoleUser, Content: "Count from one to five in words, separated by spaces."},
	}}, func(string) { deltas++ })
	out = append(out, checkStreaming(textResp, textErr, deltas))
	if toolErr == nil || textErr == nil {
		out = append(out, checkUsage(toolResp, textResp), c.checkReasoning(toolResp, textResp))
	}
	return out
}

// checkAzureVersion reports the api-version Azure's Chat Completions get.
// stream_options (streamed usage) needs 2024-09-01-preview or a later
// version; go-openai's own default, 2023-05-15, refuses it.
func (c *Client) checkAzureVersion() Finding {
	f := Finding{Name: "Azure api-version", Status: CheckOK}
	v := c.cfg.APIVersion
	switch {
	case v == "":
		f.Detail = fmt.Sprintf("not set; using %s (GA, takes stream_options)", DefaultAzureAPIVersion)
	case v < "2024-09-01":
		f.Status, f.Detail = CheckFail, fmt.Sprintf("%s is older than 2024-09-01 and refuses stream_options, so every streamed call fails", v)
		f.Hint = fmt.Sprintf("set OPENAI_API_VERSION to %s or later, or leave it empty", DefaultAzureAPIVersion)
	default:
		f.Detail = v
	}
	return f
}

// checkAPI reports the API the calls went to, and a switch auto made.
func (c *Client) checkAPI(before string) Finding {
	after := c.apiFor()
	f := Finding{Name: "model API", Status: CheckOK, Detail: apiName(after)}
	switch {
	case before != after:
		f.Detail = fmt.Sprintf("%s: the provider refused %s for this model, so auto switched (set AGENTBOT_API=%s to skip the first try)",
			apiName(after), apiName(before), after)
	case c.cfg.API == "" || c.cfg.API == APIAuto:
		f.Detail += fmt.Sprintf(" (auto, for model family %q)", cmp.Or(c.fam.name, c.cfg.Model))
	}
	return f
}

// apiName names an API for people.
func apiName(api string) string {
	if api == APIResponses {
		return "Responses API"
	}
	return "Chat Completions"
}

// checkTools reports whether the model called the probe tool.
func (c *Client) checkTools(resp *llm.Response, err error) Finding {
	f := Finding{Name: "model tool calls"}
	if err != nil {
		f.Status, f.Detail, f.Hint = CheckFail, "a request with one tool failed: "+describeCheck(err), checkHint(err)
		return f
	}
	for _, tc := range resp.Message.ToolCalls {
		if tc.Function.Name == probeTool.Name {
			f.Status, f.Detail = CheckOK, fmt.Sprintf("called %s with %s", tc.Function.Name, tc.Function.Arguments)
			return f
		}
	}
	f.Status, f.Detail = CheckWarn, "the model answered in text instead of calling the tool it was asked to call"
	f.Hint = "agents need tool calls: use a model that supports them, and turn them on in the server " +
		"(vLLM: --enable-auto-tool-choice --tool-call-parser <parser>; llama.cpp: --jinja; Ollama: a model tagged 'tools')"
	return f
}

// checkStreaming reports whether the text answer came in deltas.
func checkStreaming(resp *llm.Response, err error, deltas int) Finding {
	f := Finding{Name: "model streaming"}
	switch {
	case err != nil:
		f.Status, f.Detail, f.Hint = CheckFail, "a streamed text answer failed: "+describeCheck(err), checkHint(err)
	case deltas == 0:
		f.Status, f.Detail = CheckWarn, "the answer came in one piece, not streamed"
		f.Hint = "replies will appear only when complete; check that the server streams (stream: true)"
	default:
		f.Status, f.Detail = CheckOK, fmt.Sprintf("%d text deltas, %q", deltas, resp.Message.Content)
	}
	return f
}

// checkUsage reports the token usage the provider returned.
func checkUsage(resps ...*llm.Response) Finding {
	var u llm.Usage
	for _, r := range resps {
		if r != nil {
			u = u.Add(r.Usage)
		}
	}
	if u.Prompt == 0 && u.Completion == 0 {
		return Finding{Name: "model usage", Status: CheckWarn, Detail: "the provider reported no token usage",
			Hint: "context management and token budgets fall back to estimates; servers that report usage only when asked need stream_options.include_usage"}
	}
	return Finding{Name: "model usage", Status: CheckOK, Detail: fmt.Sprintf("prompt %d (cached %d), completion %d (reasoning %d) tokens",
		u.Prompt, u.Cached, u.Completion, u.Reasoning)}
}

// checkReasoning reports the effort sent and the reasoning state returned.
func (c *Client) checkReasoning(resps ...*llm.Response) Finding {
	api := c.apiFor()
	effort := c.fam.effort(c.cfg.ReasoningEffort, api)
	var parts []string
	switch {
	case effort != "":
		parts = append(parts, "effort "+effort)
	case c.cfg.ReasoningEffort != "":
		parts = append(parts, fmt.Sprintf("effort %s not sent: the %s family does not take it", c.cfg.ReasoningEffort, c.fam.name))
	default:
		parts = append(parts, "effort: the model's default")
	}
	tokens, items, size := 0, 0, 0
	for _, r := range resps {
		if r == nil {
			continue
		}
		tokens += r.Usage.Reasoning
		for _, it := range r.Message.ReasoningItems {
			items++
			size += it.Bytes()
		}
	}
	parts = append(parts, fmt.Sprintf("%d reasoning tokens", tokens))
	if items > 0 {
		parts = append(parts, fmt.Sprintf("%d encrypted reasoning item(s), %d bytes, kept in the transcript and sent back", items, size))
	}
	return Finding{Name: "model reasoning", Status: CheckOK, Detail: strings.Join(parts, "; ")}
}

// describeCheck is the provider's message of a failed call, with status.
func describeCheck(err error) string {
	var e *llm.Error
	if errors.As(err, &e) {
		if e.Status != 0 {
			return fmt.Sprintf("HTTP %d: %s", e.Status, e.Describe())
		}
		return e.Describe()
	}
	return err.Error()
}

// checkHint says how to fix a failed check call.
func checkHint(err error) string {
	var e *llm.Error
	errors.As(err, &e)
	msg := ""
	status := 0
	if e != nil {
		msg, status = strings.ToLower(e.Describe()), e.Status
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "check OPENAI_API_KEY (and OPENAI_API_TYPE for Azure)"
	case status == http.StatusNotFound:
		return "check AGENTBOT_MODEL (with azure: the deployment name) and OPENAI_BASE_URL; a server without the Responses API needs AGENTBOT_API=chat"
	case strings.Contains(msg, "stream_options"):
		return "the server refuses stream_options: with azure, set OPENAI_API_VERSION to " + DefaultAzureAPIVersion + " or later"
	case strings.Contains(msg, "/v1/responses"):
		return "this model needs the Responses API for tools: set AGENTBOT_API=auto or responses"
	case strings.Contains(msg, "reasoning") || strings.Contains(msg, "effort"):
		return "check AGENTBOT_REASONING_EFFORT against what the model takes, or leave it empty"
	case strings.Contains(msg, "tool"):
		return "the server refuses tools: use a model that supports them and turn tool calling on in the server"
	case status == http.StatusTooManyRequests:
		return "the provider's rate limit or quota: check the account's limits and billing"
	case status != 0:
		return "the endpoint answered with an error; check OPENAI_BASE_URL, AGENTBOT_MODEL and the provider's status"
	}
	return "check OPENAI_BASE_URL and that the server is up"
}
