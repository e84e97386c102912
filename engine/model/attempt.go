package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agentbot/engine/llm"
)

// attemptResult is how one attempt failed.
type attemptResult struct {
	err        error
	emitted    bool          // text reached onText before the failure
	retryAfter time.Duration // what the response asked, 0 if nothing
}

// maxErrorBody bounds the error body an attempt reads.
const maxErrorBody = 1 << 20

// timed runs one attempt of either API under CallTimeout; an attempt that
// ran out of it (while ctx, the caller's, is live) fails with
// ErrCallTimeout, which is retried.
func (c *Client) timed(ctx context.Context, attempt func(context.Context) (*llm.Response, attemptResult)) (*llm.Response, attemptResult) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	resp, a := attempt(actx)
	if a.err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		a.err = fmt.Errorf("%w after %s", ErrCallTimeout, c.cfg.CallTimeout)
	}
	return resp, a
}

// attempt makes one streamed Chat Completions call (timed bounds it).
func (c *Client) attempt(ctx context.Context, body []byte, onText func(string), onReasoning func()) (*llm.Response, attemptResult) {
	asm := assembler{onReasoning: onReasoning}
	var retryAfter time.Duration
	result := func(err error) attemptResult {
		return attemptResult{err: err, emitted: asm.emitted, retryAfter: retryAfter}
	}

	hreq, err := c.httpRequest(ctx, body)
	if err != nil {
		return nil, result(err)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, result(err)
	}
	defer resp.Body.Close()
	retryAfter, _ = parseRetryAfter(resp.Header, time.Now())
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, result(errorBody(resp.StatusCode, data))
	}
	if err := notAnAPI(hreq, resp); err != nil {
		return nil, result(err)
	}
	if err := c.read(resp.Body, &asm, onText); err != nil {
		return nil, result(err)
	}
	return asm.response(), result(nil)
}

// read folds the events of a stream into asm until [DONE] or the end. An
// error event or chunk is the attempt's error; so is an end without a
// finish reason, or a finish reason of "error".
func (c *Client) read(body io.Reader, asm *assembler, onText func(string)) error {
	sr := newSSEReader(body)
	for {
		event, data, err := sr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if event == "error" {
			return streamError(data)
		}
		if event != "" && event != "message" && event != "chunk" {
			continue // an event this adapter does not use
		}
		if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
			break
		}
		var chunk streamChunk
		if err := json.Unmarshal(data, &chunk); err != nil {
			return fmt.Errorf("%w: bad chunk: %v", ErrIncompleteStream, err)
		}
		if chunk.Error != nil {
			return chunk.Error.apiError(0)
		}
		asm.add(&chunk, onText)
	}
	switch asm.finish {
	case "":
		return ErrIncompleteStream
	case "error":
		return fmt.Errorf("%w: the stream finished with finish_reason \"error\"", ErrStreamError)
	}
	return nil
}

// httpRequest builds the POST of body to the chat completions endpoint.
func (c *Client) httpRequest(ctx context.Context, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	if c.azure {
		// https://learn.microsoft.com/azure/ai-foundry/openai/reference#authentication
		req.Header.Set("api-key", c.cfg.APIKey)
	} else if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	return req, nil
}

// chatURL is the chat completions endpoint for a configuration: base +
// /chat/completions, or Azure's
// {base}/openai/deployments/{deployment}/chat/completions?api-version=.
func chatURL(base, deployment, apiVersion string, azure bool) string {
	base = strings.TrimRight(base, "/")
	if !azure {
		return base + "/chat/completions"
	}
	return fmt.Sprintf("%s/openai/deployments/%s/chat/completions?api-version=%s", base, url.PathEscape(deployment), url.QueryEscape(apiVersion))
}
