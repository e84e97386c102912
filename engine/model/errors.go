package model

import (
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

var (
	// ErrCallTimeout is wrapped by the error of an attempt that ran past
	// Config.CallTimeout (while the caller's context was still live).
	ErrCallTimeout = errors.New("attempt timed out")
	// ErrIncompleteStream is wrapped by the error of a stream that ended
	// without a finish reason: the connection was closed early.
	ErrIncompleteStream = errors.New("stream ended without a finish reason")
	// ErrStreamError is wrapped by the error of a stream that finished with
	// finish_reason "error" without saying more; it is retried.
	ErrStreamError = errors.New("the provider ended the stream with an error")
)

// Error is a failed model call. Its message never contains the API key.
type Error struct {
	// Status is the HTTP status of the last attempt, 0 when there was none
	// (network error, timeout, cancellation).
	Status int
	// Tries is the number of attempts made.
	Tries int
	// Partial is set when the last attempt broke after passing text to
	// onText; that text is incomplete and was not retried.
	Partial bool
	// Err is the last attempt's error (or the context's).
	Err error

	apiKey string
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
	msg := head + " " + describe(e.Err)
	if e.apiKey != "" {
		msg = strings.ReplaceAll(msg, e.apiKey, "[redacted]")
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// maxDetail bounds the part of a raw error body that reaches a message.
const maxDetail = 300

// describe returns the useful part of err: the API's message rather than
// go-openai's "error, status code: ..." framing, which repeats the status.
func describe(err error) string {
	if err == nil {
		return "unknown error"
	}
	switch e := err.(type) {
	case *openai.APIError:
		if e.Message != "" {
			return e.Message
		}
	case *openai.RequestError:
		body := strings.TrimSpace(string(e.Body))
		if len(body) > maxDetail {
			body = strings.ToValidUTF8(body[:maxDetail], "") + "..."
		}
		if body != "" {
			return body
		}
		if e.Err != nil {
			return e.Err.Error()
		}
		return e.HTTPStatus
	case *retryAfterError:
		return fmt.Sprintf("%s (the server asks to retry after %s, longer than the %s this client waits)",
			describe(e.err), e.after, maxRetryAfter)
	}
	return err.Error()
}

// retryAfterError is a retryable error whose Retry-After was too long to wait.
type retryAfterError struct {
	after time.Duration
	err   error
}

func (e *retryAfterError) Error() string { return describe(e) }
func (e *retryAfterError) Unwrap() error { return e.err }

// IsContextLength reports whether err is the provider refusing a request
// that is longer than the model's context window (OpenAI's
// context_length_exceeded, and the same words from compatible servers).
func IsContextLength(err error) bool {
	var api *openai.APIError
	if errors.As(err, &api) {
		if code, ok := api.Code.(string); ok && code == "context_length_exceeded" {
			return true
		}
		return contextWords(api.Message)
	}
	var req *openai.RequestError
	if errors.As(err, &req) {
		return contextWords(string(req.Body))
	}
	return false
}

// contextWords reports whether a provider's message says the context is
// too long.
func contextWords(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "context_length_exceeded") || strings.Contains(m, "maximum context length") ||
		strings.Contains(m, "context window") || strings.Contains(m, "prompt is too long")
}

// ContextWindow reads the window a context_length_exceeded error states
// ("maximum context length is 8192 tokens"), when it states one.
func ContextWindow(err error) (int, bool) {
	if !IsContextLength(err) {
		return 0, false
	}
	msg := err.Error()
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
