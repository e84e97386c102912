package model

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

const (
	// maxBackoff caps the exponential backoff.
	maxBackoff = 30 * time.Second
	// maxRetryAfter is the longest Retry-After the client waits; a longer
	// one ends the call at once with the server's error.
	maxRetryAfter = time.Minute
)

// statusOf returns the HTTP status carried by err, or 0. Errors sent inside
// a stream (data: {"error": ...}) carry no HTTP status; their numeric code,
// when it looks like one (OpenRouter sends e.g. 502), stands in for it.
func statusOf(err error) int {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		if apiErr.HTTPStatusCode != 0 {
			return apiErr.HTTPStatusCode
		}
		if code, ok := apiErr.Code.(int); ok && code >= 400 && code <= 599 {
			return code
		}
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// retryableStatus reports whether an HTTP status is worth another try.
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// retryable reports whether a failed attempt may succeed when repeated.
// Context cancellation is handled by the caller and never gets here.
func retryable(err error) bool {
	if transientKind(err) {
		return true
	}
	if sf := (*streamFailure)(nil); errors.As(err, &sf) {
		return sf.transient()
	}
	if isQuota(err) {
		return false // a 429 that waiting does not cure
	}
	if status := statusOf(err); status != 0 {
		return retryableStatus(status)
	}
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return inStreamRetryable(apiErr)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false // a misspelt host does not come back
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return true
	}
	// HTTP/2 resets and GOAWAYs come as unexported net/http types.
	msg := err.Error()
	return strings.Contains(msg, "stream error: stream ID") || strings.Contains(msg, "http2: server sent GOAWAY")
}

// transientKind reports the failures that are transient whatever their
// status: a timed-out attempt, a stream cut or ended by an error without
// more said, and Groq's tool_use_failed.
func transientKind(err error) bool {
	return errors.Is(err, ErrCallTimeout) || errors.Is(err, ErrIncompleteStream) || errors.Is(err, ErrStreamError) || toolUseFailed(err)
}

// toolUseFailed reports Groq's tool_use_failed: the model's tool-call
// generation did not parse, and Groq sent this error instead of it, inside
// the 200 stream (or as a 400 without streaming), typed
// invalid_request_error although the request was fine (agno-agi/agno#4090,
// huggingface/smolagents#1119 show the body; engine/fakemodel's Groq mode
// sends it). Another generation of the same request usually parses, so it
// is retried like a transient error, within Config.MaxTries. The failed
// generation the error carries (failed_generation) is never read: it is
// neither text nor a tool call of the answer, so nothing of it runs.
func toolUseFailed(err error) bool {
	var apiErr *openai.APIError
	return errors.As(err, &apiErr) && apiErr.Code == "tool_use_failed"
}

// inStreamRetryable reports whether an error sent inside a 200 stream,
// without a status, is worth another try: the request was accepted, so the
// failure is the provider's (overloaded, an upstream that fell over)
// unless its type says the request was wrong.
func inStreamRetryable(apiErr *openai.APIError) bool {
	t := strings.ToLower(apiErr.Type)
	for _, wrong := range []string{"invalid_request", "authentication", "permission", "not_found", "invalid_argument"} {
		if strings.Contains(t, wrong) {
			return false
		}
	}
	return true
}

// parseRetryAfter reads the delay a response asks for: retry-after-ms
// (Azure, OpenAI) or Retry-After in seconds or as an HTTP date. ok is false
// when neither header is usable.
func parseRetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs > 1e9 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}
