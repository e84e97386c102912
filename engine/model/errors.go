package model

import (
	"errors"
	"fmt"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
	"agentbot/engine/text"
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

// minSecret is the shortest API key the client hides from its errors.
const minSecret = 8

// maxDetail bounds the part of a raw error body that reaches a message.
const maxDetail = 300

// fail converts err, the last attempt's error, into the *llm.Error of a
// call: this is the edge where go-openai's error types become ours. The API
// key never survives into it.
func (c *Client) fail(err error, tries, status int, partial bool) *llm.Error {
	e := &llm.Error{Status: status, Tries: tries, Partial: partial, Err: err}
	fill(e, err)
	markContextLength(e)
	// A key shorter than minSecret is no provider's secret (local servers
	// take any: "ollama", "x"), and hiding it would mangle every message
	// with those letters.
	if key := c.cfg.APIKey; len(key) >= minSecret {
		e.Message = strings.ReplaceAll(e.Message, key, "[redacted]")
		e.Detail = strings.ReplaceAll(e.Detail, key, "[redacted]")
		if err != nil && strings.Contains(err.Error(), key) {
			e.Err = &redactedError{err: err, key: key}
		}
	}
	return e
}

// fill copies what the provider said from a go-openai error into e.
func fill(e *llm.Error, err error) {
	var api *openai.APIError
	var req *openai.RequestError
	var ra *retryAfterError
	var sf *streamFailure
	switch {
	case errors.As(err, &sf):
		e.Code, e.Message = sf.code, sf.Error()
	case errors.As(err, &ra):
		e.Message = describe(ra)
		if errors.As(ra.err, &api) {
			e.Code, e.Type = codeString(api.Code), api.Type
		}
	case errors.As(err, &api):
		e.Code, e.Type, e.Message = codeString(api.Code), api.Type, api.Message
	case errors.As(err, &req):
		e.Detail = bounded(string(req.Body))
		if e.Detail == "" && req.Err != nil {
			e.Message = req.Err.Error()
		} else if e.Detail == "" {
			e.Message = req.HTTPStatus
		}
	}
}

// codeString is a provider's error code as text ("" when absent).
func codeString(code any) string {
	if code == nil {
		return ""
	}
	return fmt.Sprint(code)
}

// bounded trims a raw body to maxDetail bytes of valid UTF-8.
func bounded(body string) string {
	body = strings.TrimSpace(body)
	if len(body) > maxDetail {
		body = text.CutBytes(body, maxDetail, "...")
	}
	return body
}

// describe returns the useful part of err: the API's message rather than
// go-openai's "error, status code: ..." framing, which repeats the status.
func describe(err error) string {
	if err == nil {
		return "unknown error"
	}
	switch e := err.(type) {
	case *retryAfterError:
		return fmt.Sprintf("%s (the server asks to retry after %s, longer than the %s this client waits)",
			describe(e.err), e.after, maxRetryAfter)
	case *llm.Error:
		return e.Describe()
	}
	probe := &llm.Error{Err: err}
	fill(probe, err)
	return probe.Describe()
}

// retryAfterError is a retryable error whose Retry-After was too long to wait.
type retryAfterError struct {
	after time.Duration
	err   error
}

func (e *retryAfterError) Error() string { return describe(e) }
func (e *retryAfterError) Unwrap() error { return e.err }

// redactedError hides the API key in an error's text.
type redactedError struct {
	err error
	key string
}

func (e *redactedError) Error() string { return strings.ReplaceAll(e.err.Error(), e.key, "[redacted]") }
func (e *redactedError) Unwrap() error { return e.err }
