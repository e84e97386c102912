package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"time"
)

// go-openai turns an error response into an *openai.APIError or
// *openai.RequestError and drops its headers, Retry-After included. So the
// Client hands go-openai a headerDoer (go-openai's HTTPDoer) around the
// configured *http.Client: each attempt puts a *responseInfo into its
// request context, and the doer fills it from the response before go-openai
// sees it. Wrapping the Doer rather than the client's RoundTripper leaves
// the caller's *http.Client (transport, proxy, redirects, jar) untouched.

// responseInfo is what the doer saw of an attempt's response.
type responseInfo struct {
	retryAfter    time.Duration
	hasRetryAfter bool
}

// responseInfoKey is the context key of an attempt's *responseInfo.
type responseInfoKey struct{}

// withResponseInfo returns ctx carrying info for the doer to fill.
func withResponseInfo(ctx context.Context, info *responseInfo) context.Context {
	return context.WithValue(ctx, responseInfoKey{}, info)
}

// headerDoer records the Retry-After of responses into the request
// context's *responseInfo. It also adds Azure's api-key header to requests
// for its v1 (Responses) surface, which go-openai sends as a plain OpenAI
// client.
type headerDoer struct {
	inner  *http.Client
	apiKey string // set for Azure's v1 surface
}

// Do sends req with the inner client and records what the response asks.
func (d *headerDoer) Do(req *http.Request) (*http.Response, error) {
	if d.apiKey != "" {
		req.Header.Del("Authorization")
		req.Header.Set("api-key", d.apiKey)
	}
	resp, err := d.inner.Do(req)
	if resp != nil {
		if info, ok := req.Context().Value(responseInfoKey{}).(*responseInfo); ok {
			info.retryAfter, info.hasRetryAfter = parseRetryAfter(resp.Header, time.Now())
		}
		if err := notAnAPI(req, resp); err != nil {
			resp.Body.Close()
			return nil, err
		}
	}
	return resp, err
}

// notAnAPI is ErrNotAnAPI, with the request, when resp is a web page
// that answered req with a success; nil otherwise.
func notAnAPI(req *http.Request, resp *http.Response) error {
	if resp.StatusCode >= http.StatusMultipleChoices || !isHTML(resp.Header.Get("Content-Type")) {
		return nil
	}
	return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, ErrNotAnAPI)
}

// ErrNotAnAPI is a base URL that answers a call with a web page (HTML)
// where an OpenAI-compatible API answers JSON or an event stream: a site's
// front page, a proxy's sign-in page, a server's URL without its /v1. It
// is not retried, and its hint names OPENAI_BASE_URL.
var ErrNotAnAPI = errors.New("the endpoint answered with a web page (HTML), not an OpenAI-compatible API")

// isHTML reports whether a Content-Type is a web page's.
func isHTML(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// go-openai's ChatCompletionRequest has `temperature,omitempty` on a plain
// float32, so a configured temperature of 0 would be dropped and the
// provider's default (often 1) used instead. The chat body is encoded from
// that type, so the field is added to it: since go-openai omitted it, the
// body cannot already carry it.

// withZeroTemperature inserts "temperature":0 at the start of a JSON
// object body.
func withZeroTemperature(body []byte) ([]byte, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) < 2 || trimmed[0] != '{' {
		return nil, fmt.Errorf("request body is not a JSON object")
	}
	sep := ","
	if bytes.HasPrefix(bytes.TrimLeft(trimmed[1:], " \t\r\n"), []byte("}")) {
		sep = ""
	}
	out := make([]byte, 0, len(trimmed)+len(`"temperature":0,`))
	out = append(out, '{')
	out = append(out, `"temperature":0`+sep...)
	return append(out, trimmed[1:]...), nil
}
