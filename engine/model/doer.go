package model

import (
	"context"
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
// context's *responseInfo.
type headerDoer struct {
	inner *http.Client
}

// Do sends req with the inner client and records what the response asks.
func (d *headerDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.inner.Do(req)
	if resp != nil {
		if info, ok := req.Context().Value(responseInfoKey{}).(*responseInfo); ok {
			info.retryAfter, info.hasRetryAfter = parseRetryAfter(resp.Header, time.Now())
		}
	}
	return resp, err
}
