package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
)

// attemptResult is how one attempt failed.
type attemptResult struct {
	err        error
	emitted    bool          // text reached onText before the failure
	retryAfter time.Duration // what the response asked, 0 if nothing
}

// attempt makes one streamed call bounded by CallTimeout.
func (c *Client) attempt(ctx context.Context, creq openai.ChatCompletionRequest, onText func(string)) (*llm.Response, attemptResult) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	var info responseInfo
	var asm assembler
	result := func(err error) attemptResult {
		if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s", ErrCallTimeout, c.cfg.CallTimeout)
		}
		return attemptResult{err: err, emitted: asm.emitted, retryAfter: info.retryAfter}
	}

	stream, err := c.api.CreateChatCompletionStream(withResponseInfo(actx, &info), creq)
	if err != nil {
		return nil, result(err)
	}
	defer stream.Close()
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			// go-openai wraps an error event of the stream as "error, %w";
			// keep the *openai.APIError itself.
			var apiErr *openai.APIError
			if errors.As(err, &apiErr) {
				err = apiErr
			}
			return nil, result(err)
		}
		asm.add(chunk, onText)
	}
	if asm.finish == "" {
		return nil, result(ErrIncompleteStream)
	}
	return asm.response(), result(nil)
}
