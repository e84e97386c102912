package model

import (
	"strconv"
	"strings"

	"agentbot/engine/llm"
)

// Providers say "the prompt is longer than the context window" each in its
// own words. markContextLength recognises each documented form, so that
// context management compacts and retries whoever the provider is: it sets
// the error's Code to "context_length_exceeded" (the engine's name for the
// condition, OpenAI's code) and, when the message states the window in a
// form llm.ContextWindow does not read, adds "maximum context length is N
// tokens" to the Detail.
//
// The forms, one per provider (tests: TestContextErrorsOfEveryProvider):
//   - OpenAI, Azure, Groq: code "context_length_exceeded" ("This model's
//     maximum context length is 128000 tokens. However, your messages
//     resulted in ..."; Groq: "Please reduce the length of the messages or
//     completion.", thepersonalaicompany/amurex-backend#51).
//   - DeepSeek and vLLM: the same "maximum context length is N tokens"
//     words with code "invalid_request_error" or 400
//     (evalstate/fast-agent#621, vllm-project/vllm#20409).
//   - Anthropic's OpenAI-compatible endpoint: "prompt is too long: 211180
//     tokens > 200000 maximum" (anthropics/claude-code#62560).
//   - Gemini: "The input token count (132478) exceeds the maximum number of
//     tokens allowed (131072)." with status INVALID_ARGUMENT
//     (google-gemini/gemini-cli#4118).
//   - Mistral: "Prompt contains 40000 tokens, too large for model with
//     32768 maximum context length"
//     (https://docs.mistral.ai/resources/known-limitations).
//   - llama.cpp server: type "exceed_context_size_error", "the request
//     exceeds the available context size...", with n_ctx
//     (ggml-org/llama.cpp#15780, #19774).
//   - LM Studio: "Trying to keep the first 111490 tokens when context the
//     overflows. However, the model is loaded with context length of only
//     32768 tokens, which is not enough." (lmstudio-bug-tracker#546), or
//     "...tokens to keep from the initial prompt is greater than the
//     context length".
//   - Ollama: "prompt too long; exceeded max context length by 4096
//     tokens", status 400, for models that refuse instead of truncating
//     (ollama/ollama#17889).
func markContextLength(e *llm.Error) {
	text := strings.ToLower(e.Message + " " + e.Detail)
	if !contextLengthText(text) && e.Type != "exceed_context_size_error" {
		return
	}
	e.Code = "context_length_exceeded"
	if strings.Contains(text, "maximum context length is ") {
		return // llm.ContextWindow reads it
	}
	if n := statedWindow(text); n > 0 {
		note := "maximum context length is " + strconv.Itoa(n) + " tokens"
		if e.Detail == "" {
			e.Detail = note
		} else {
			e.Detail += "; " + note
		}
	}
}

// contextPhrases are the lower-case words of the forms above.
var contextPhrases = []string{
	"context_length_exceeded",
	"maximum context length",
	"prompt is too long",
	"exceeds the maximum number of tokens allowed",
	"too large for model with",
	"exceeds the available context size",
	"context length of only",
	"greater than the context length",
	"prompt too long; exceeded",
	"please reduce the length of the messages",
}

// contextLengthText reports whether lower-case text is one of the forms.
func contextLengthText(text string) bool {
	for _, p := range contextPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// windowMarkers precede (before) or follow (after) the window's number.
var windowMarkers = []struct{ before, after string }{
	{before: "maximum number of tokens allowed ("},   // Gemini
	{after: " maximum context length"},               // Mistral: "with 32768 maximum context length"
	{after: " maximum"},                              // Anthropic: "> 200000 maximum"
	{before: "context length of only "},              // LM Studio
	{before: "(n_ctx "},                              // llama.cpp (see wireError.apiError)
	{before: "exceeds the available context size ("}, // llama.cpp, newer
}

// statedWindow reads the window a context-length message states in one of
// the non-OpenAI forms, or 0.
func statedWindow(text string) int {
	for _, m := range windowMarkers {
		if m.before != "" {
			if i := strings.Index(text, m.before); i >= 0 {
				if n := leadingInt(text[i+len(m.before):]); n > 0 {
					return n
				}
			}
			continue
		}
		if i := strings.Index(text, m.after); i > 0 {
			if n := trailingInt(text[:i]); n > 0 {
				return n
			}
		}
	}
	return 0
}

// leadingInt reads the number s starts with (commas allowed), or 0.
func leadingInt(s string) int {
	n, digits := 0, 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			n = n*10 + int(c-'0')
			digits++
		case c == ',' && digits > 0:
		default:
			return bounded32(n, digits)
		}
		if n > 1<<30 {
			return 0
		}
	}
	return bounded32(n, digits)
}

// trailingInt reads the number s ends with, or 0.
func trailingInt(s string) int {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || len(s)-i > 10 {
		return 0
	}
	n, _ := strconv.Atoi(s[i:])
	return n
}

func bounded32(n, digits int) int {
	if digits == 0 {
		return 0
	}
	return n
}
