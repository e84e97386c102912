package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// streamFailure is an error the Responses stream reported in band: an
// "error" event or a response.failed event. It carries no HTTP status (the
// stream's was 200), so whether to retry comes from its code.
type streamFailure struct {
	event   string // "error" or "response.failed"
	code    string
	message string
}

func (e *streamFailure) Error() string {
	msg := e.message
	if msg == "" {
		msg = "the provider reported a failure without a message"
	}
	if e.code != "" {
		return fmt.Sprintf("%s (%s: %s)", msg, e.event, e.code)
	}
	return fmt.Sprintf("%s (%s)", msg, e.event)
}

// transient reports whether another try may succeed: OpenAI's response
// error codes for its own trouble (server_error, rate_limit_exceeded,
// vector_store_timeout), and a failure that names no code at all. Codes
// about the request (invalid_prompt, context_length_exceeded, ...) are not.
func (e *streamFailure) transient() bool {
	switch e.code {
	case "", "server_error", "rate_limit_exceeded", "vector_store_timeout", "internal_error":
		return true
	}
	return false
}

// respCall is a function call being assembled.
type respCall struct {
	callID, name string
	args         strings.Builder
	done         bool // its output_item.done (or arguments.done) arrived
}

// respAssembler builds one assistant message from Responses stream events.
type respAssembler struct {
	text      strings.Builder
	refusal   strings.Builder
	calls     []*respCall
	byOutput  map[int]*respCall // output_index -> call
	reasoning []transcript.ReasoningItem
	usage     llm.Usage
	status    string // "completed" or "incomplete" once the response ends
	reason    string // incomplete_details.reason
	emitted   bool
}

// rawItem is the part of an output item go-openai's ResponseOutputItem
// lacks: a reasoning item's encrypted_content.
type rawItem struct {
	Item struct {
		EncryptedContent string `json:"encrypted_content"`
	} `json:"item"`
}

// add folds one event in, passing text deltas to onText. It returns the
// provider's error for an error or response.failed event. Unknown events
// (reasoning summary deltas, new event types) are ignored.
func (a *respAssembler) add(ev openai.ResponseStreamEvent, onText func(string)) error {
	switch ev.Type {
	case openai.ResponseStreamEventOutputTextDelta:
		a.text.WriteString(ev.Delta)
		if onText != nil && ev.Delta != "" {
			onText(ev.Delta)
			a.emitted = true
		}
	case openai.ResponseStreamEventRefusalDelta:
		a.refusal.WriteString(ev.Delta)
	case openai.ResponseStreamEventOutputItemAdded, openai.ResponseStreamEventOutputItemDone:
		return a.item(ev)
	case openai.ResponseStreamEventFunctionArgumentsDelta:
		if c := a.call(ev.OutputIndex); c != nil {
			c.args.WriteString(ev.Delta)
		}
	case openai.ResponseStreamEventFunctionArgumentsDone:
		if c := a.call(ev.OutputIndex); c != nil {
			c.args.Reset()
			c.args.WriteString(ev.Arguments)
			c.done = true
		}
	case openai.ResponseStreamEventCompleted, openai.ResponseStreamEventIncomplete:
		a.end(ev)
	case openai.ResponseStreamEventFailed, openai.ResponseStreamEventError:
		return failure(ev)
	}
	return nil
}

// failure is the error of an error or response.failed event.
func failure(ev openai.ResponseStreamEvent) error {
	f := &streamFailure{event: string(ev.Type), code: ev.Code, message: ev.Message}
	switch {
	case ev.Type == openai.ResponseStreamEventFailed && ev.Response != nil && ev.Response.Error != nil:
		f.code, f.message = ev.Response.Error.Code, ev.Response.Error.Message
	case ev.Error != nil && f.message == "":
		f.code, f.message = ev.Error.Code, ev.Error.Message
	}
	return f
}

// call returns the function call at output index i, if any.
func (a *respAssembler) call(i int) *respCall { return a.byOutput[i] }

// item handles output_item.added and output_item.done.
func (a *respAssembler) item(ev openai.ResponseStreamEvent) error {
	it := ev.Item
	if it == nil {
		return nil
	}
	done := ev.Type == openai.ResponseStreamEventOutputItemDone
	switch it.Type {
	case "function_call":
		c := a.call(ev.OutputIndex)
		if c == nil {
			if a.byOutput == nil {
				a.byOutput = map[int]*respCall{}
			}
			c = &respCall{callID: it.CallID, name: it.Name}
			a.byOutput[ev.OutputIndex] = c
			a.calls = append(a.calls, c)
		}
		if done {
			c.callID, c.name = it.CallID, it.Name
			c.args.Reset()
			c.args.WriteString(it.Arguments)
			c.done = true
		}
	case "reasoning":
		if !done {
			return nil
		}
		var raw rawItem
		if err := json.Unmarshal(ev.Raw, &raw); err != nil {
			return fmt.Errorf("decode reasoning item %s: %w", it.ID, err)
		}
		r := transcript.ReasoningItem{ID: it.ID, EncryptedContent: raw.Item.EncryptedContent}
		for _, s := range it.Summary {
			r.Summary = append(r.Summary, s.Text)
		}
		a.reasoning = append(a.reasoning, r)
	}
	return nil
}

// end records the final status and usage of response.completed or
// response.incomplete.
func (a *respAssembler) end(ev openai.ResponseStreamEvent) {
	a.status = "completed"
	if ev.Type == openai.ResponseStreamEventIncomplete {
		a.status = "incomplete"
	}
	r := ev.Response
	if r == nil {
		return
	}
	if r.IncompleteDetails != nil {
		a.reason = r.IncompleteDetails.Reason
	}
	if u := r.Usage; u != nil {
		a.usage = llm.Usage{Prompt: u.InputTokens, Completion: u.OutputTokens}
		if u.InputTokensDetails != nil {
			a.usage.Cached = u.InputTokensDetails.CachedTokens
		}
		if u.OutputTokensDetails != nil {
			a.usage.Reasoning = u.OutputTokensDetails.ReasoningTokens
		}
	}
}

// response returns the assembled reply. A response cut short
// (incomplete) finishes with "length" or "content_filter", and any
// function call whose arguments did not finish is dropped: truncated
// arguments are never run.
func (a *respAssembler) response() *llm.Response {
	msg := transcript.Message{
		Role:           transcript.RoleAssistant,
		Content:        a.text.String(),
		Refusal:        a.refusal.String(),
		ReasoningItems: a.reasoning,
	}
	for i, c := range a.calls {
		if !c.done && a.status != "completed" {
			continue
		}
		id := c.callID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		msg.ToolCalls = append(msg.ToolCalls, transcript.ToolCall{
			ID: id, Type: transcript.ToolTypeFunction,
			Function: transcript.FunctionCall{Name: c.name, Arguments: c.args.String()},
		})
	}
	finish := "stop"
	switch {
	case a.status == "incomplete" && a.reason == "content_filter":
		finish = "content_filter"
	case a.status == "incomplete":
		finish = "length"
	case len(msg.ToolCalls) > 0:
		finish = "tool_calls"
	}
	return &llm.Response{Message: msg, FinishReason: finish, Usage: a.usage}
}

// attemptResponses makes one streamed Responses call bounded by
// CallTimeout. The stream ends at response.completed or
// response.incomplete; a stream that ends before either is incomplete.
func (c *Client) attemptResponses(ctx context.Context, rreq openai.CreateResponseRequest, onText func(string)) (*llm.Response, attemptResult) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.CallTimeout)
	defer cancel()
	var info responseInfo
	var asm respAssembler
	result := func(err error) attemptResult {
		if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s", ErrCallTimeout, c.cfg.CallTimeout)
		}
		return attemptResult{err: err, emitted: asm.emitted, retryAfter: info.retryAfter}
	}
	stream, err := c.respAPI.CreateResponseStream(withResponseInfo(actx, &info), rreq)
	if err != nil {
		return nil, result(err)
	}
	defer stream.Close()
	for asm.status == "" {
		ev, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			var apiErr *openai.APIError
			if errors.As(err, &apiErr) {
				err = apiErr
			}
			return nil, result(err)
		}
		if err := asm.add(ev, onText); err != nil {
			return nil, result(err)
		}
	}
	if asm.status == "" {
		return nil, result(ErrIncompleteStream)
	}
	return asm.response(), result(nil)
}
