package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Error is a failed model call, in our terms: what the provider said
// (status, code, type, message, raw detail) and how the call went (tries,
// partial output). Adapters build it at their edge and never put the API
// key in it.
type Error struct {
	// Status is the HTTP status of the last attempt (or the status an
	// in-stream error names), 0 when there was none (network error,
	// timeout, cancellation).
	Status int
	// Code and Type are the provider's error code and type, when it sent
	// them ("context_length_exceeded", "invalid_request_error").
	Code string
	Type string
	// Message is the provider's own message, when it sent one.
	Message string
	// Detail is the raw part of an error body that is not a message (a
	// body that is not JSON, a provider's metadata), bounded in size.
	Detail string
	// Tries is the number of attempts made.
	Tries int
	// Partial is set when the last attempt broke after passing text to
	// onText; that text is incomplete and was not retried.
	Partial bool
	// Err is the cause (the context's error, a timeout, a network error, or
	// the adapter's own error value for the provider's answer).
	Err error
}

// Error returns e.g. "model call: status 500 after 3 tries: <message>".
func (e *Error) Error() string {
	parts := []string{"model call"}
	if e.Status != 0 {
		parts = append(parts, fmt.Sprintf("status %d", e.Status))
	}
	if e.Partial {
		parts = append(parts, "stream broke after partial output")
	}
	if e.Tries > 1 {
		parts = append(parts, fmt.Sprintf("after %d tries", e.Tries))
	}
	head := parts[0] + ":"
	if len(parts) > 1 {
		head = parts[0] + ": " + strings.Join(parts[1:], " ") + ":"
	}
	return head + " " + e.Describe()
}

// Describe is the useful part of the error: the provider's message (with
// its detail), else the detail, else the cause.
func (e *Error) Describe() string {
	switch {
	case e.Message != "" && e.Detail != "":
		return e.Message + " (" + e.Detail + ")"
	case e.Message != "":
		return e.Message
	case e.Detail != "":
		return e.Detail
	case e.Err != nil:
		return e.Err.Error()
	}
	return "unknown error"
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// IsContextLength reports whether err is the provider refusing a request
// that is longer than the model's context window (OpenAI's
// context_length_exceeded, and the same words from compatible servers).
func IsContextLength(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if e.Code == "context_length_exceeded" {
		return true
	}
	return contextWords(e.Message) || contextWords(e.Detail)
}

// contextWords reports whether a provider's message says the context is
// too long.
func contextWords(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "context_length_exceeded") || strings.Contains(m, "maximum context length") ||
		strings.Contains(m, "context window") || strings.Contains(m, "prompt is too long")
}

// ContextWindow reads the window a context-length error states ("maximum
// context length is 8192 tokens"), when it states one.
func ContextWindow(err error) (int, bool) {
	if !IsContextLength(err) {
		return 0, false
	}
	var e *Error
	errors.As(err, &e)
	msg := e.Message + " " + e.Detail
	const marker = "maximum context length is "
	i := strings.Index(strings.ToLower(msg), marker)
	if i < 0 {
		return 0, false
	}
	n := 0
	for _, c := range msg[i+len(marker):] {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		if n > 1<<30 {
			return 0, false
		}
	}
	return n, n > 0
}
