package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"agentbot/engine/llm"
	"agentbot/engine/transcript"
)

// assembler builds one assistant message from stream chunks.
type assembler struct {
	content   strings.Builder
	refusal   strings.Builder
	reasoning strings.Builder
	// reasoningField is the wire name the reasoning text came under when
	// it is not reasoning_content.
	reasoningField string
	details        []json.RawMessage // reasoning_details items, verbatim, in order
	calls          []indexedCall     // in order of first appearance
	byIndex        map[int]int       // tool-call index -> position in calls
	finish         string
	usage          llm.Usage
	emitted        bool
}

// indexedCall is a tool call being assembled, with its stream index.
type indexedCall struct {
	index int
	call  transcript.ToolCall
}

// add folds chunk in, passing its text to onText.
func (a *assembler) add(chunk *streamChunk, onText func(string)) {
	if u := chunk.Usage; u != nil {
		a.usage = llm.Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens}
		if u.PromptTokensDetails != nil {
			a.usage.Cached = u.PromptTokensDetails.CachedTokens
		}
	}
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
		if ch.Index != 0 {
			continue // one choice is asked for; ignore any other
		}
		d := &ch.Delta
		if text := d.Content; text != "" {
			a.content.WriteString(text)
			if onText != nil {
				onText(text)
				a.emitted = true
			}
		}
		a.refusal.WriteString(d.Refusal)
		a.addReasoning(d)
		for _, tc := range d.ToolCalls {
			a.addToolCall(tc)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.finish = *ch.FinishReason
		}
	}
}

// addReasoning keeps the reasoning of a delta: its text under whichever
// name it came, and OpenRouter's reasoning_details items as they are.
func (a *assembler) addReasoning(d *streamDelta) {
	switch {
	case d.ReasoningContent != "":
		a.reasoning.WriteString(d.ReasoningContent)
	case d.Reasoning != "":
		a.reasoning.WriteString(d.Reasoning)
		a.reasoningField = "reasoning"
	}
	for _, item := range d.ReasoningDetails {
		if len(item) > 0 && string(item) != "null" {
			a.details = append(a.details, append(json.RawMessage(nil), item...))
		}
	}
}

// addToolCall folds in one tool-call delta. The first delta of an index
// brings the id and name; later ones append to the arguments. A delta
// without an index (some servers send whole calls that way) starts a new
// call when it brings a new id, and continues the last call otherwise.
func (a *assembler) addToolCall(tc wireToolCall) {
	if a.byIndex == nil {
		a.byIndex = map[int]int{}
	}
	var index int
	switch last := len(a.calls) - 1; {
	case tc.Index != nil:
		index = *tc.Index
	case last < 0:
		index = 0
	case tc.ID != "" && tc.ID != a.calls[last].call.ID:
		index = a.calls[last].index + 1
		for _, taken := a.byIndex[index]; taken; _, taken = a.byIndex[index] {
			index++
		}
	default:
		index = a.calls[last].index
	}
	pos, ok := a.byIndex[index]
	if !ok {
		pos = len(a.calls)
		a.byIndex[index] = pos
		a.calls = append(a.calls, indexedCall{index: index})
	}
	call := &a.calls[pos].call
	if call.ID == "" {
		call.ID = tc.ID
	}
	if call.Function.Name == "" {
		call.Function.Name = tc.Function.Name
	}
	call.Function.Arguments += tc.Function.Arguments
	if x := tc.ExtraContent; x != nil && x.Google.ThoughtSignature != "" {
		call.ThoughtSignature = x.Google.ThoughtSignature
	}
}

// response returns the assembled reply. Tool calls come in index order,
// typed "function"; one that never got an id is named "call_<index>" so
// its result can still refer to it.
func (a *assembler) response() *llm.Response {
	msg := transcript.Message{
		Role:             transcript.RoleAssistant,
		Content:          a.content.String(),
		Refusal:          a.refusal.String(),
		ReasoningContent: a.reasoning.String(),
	}
	if msg.ReasoningContent != "" {
		msg.ReasoningField = a.reasoningField
	}
	if len(a.details) > 0 {
		if raw, err := json.Marshal(a.details); err == nil {
			msg.ReasoningDetails = raw
		}
	}
	calls := append([]indexedCall(nil), a.calls...)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	for _, ic := range calls {
		call := ic.call
		call.Type = transcript.ToolTypeFunction
		if call.ID == "" {
			call.ID = fmt.Sprintf("call_%d", ic.index)
		}
		msg.ToolCalls = append(msg.ToolCalls, call)
	}
	return &llm.Response{Message: msg, FinishReason: a.finish, Usage: a.usage}
}
