package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/transcript"
)

// The chat adapter writes the messages of a request itself rather than
// through go-openai's ChatCompletionMessage, which has no field for
// OpenRouter's reasoning_details nor for Gemini's
// tool_calls[].extra_content: the rest of the request (model, tools,
// sampling, stream options) is still go-openai's ChatCompletionRequest, and
// its "messages":null is replaced by these.

// wireMessage is one chat message as sent.
type wireMessage struct {
	Role string `json:"role"`
	// Content is null on an assistant message that only calls tools: the
	// form OpenAI's own SDK sends back, accepted by every server we know,
	// where "" is refused by some ("text content blocks must be
	// non-empty", Anthropic's compatible endpoint).
	Content    *string        `json:"content"`
	Refusal    string         `json:"refusal,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	// ReasoningContent is DeepSeek's and vLLM's field; a pointer because
	// DeepSeek needs it present, even empty, on tool-call turns.
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	Reasoning        string          `json:"reasoning,omitempty"`
	ReasoningDetails json.RawMessage `json:"reasoning_details,omitempty"`
}

// wireToolCall is one tool call as sent and as streamed.
type wireToolCall struct {
	Index        *int          `json:"index,omitempty"`
	ID           string        `json:"id,omitempty"`
	Type         string        `json:"type,omitempty"`
	Function     wireFunction  `json:"function"`
	ExtraContent *extraContent `json:"extra_content,omitempty"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// extraContent is Gemini's per-call extension of the OpenAI format
// (https://ai.google.dev/gemini-api/docs/openai#thinking: the signature
// travels as tool_calls[].extra_content.google.thought_signature).
type extraContent struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	} `json:"google"`
}

// skipSignature is the value Google documents for a function call Gemini
// did not write (a call the runtime injected, or a transcript from another
// model): https://ai.google.dev/gemini-api/docs/thought-signatures
// ("dummy signatures").
const skipSignature = "skip_thought_signature_validator"

// reasoningStyle is what the transcript and the model name say about the
// provider's reasoning rules.
type reasoningStyle struct {
	// deepseek: every assistant message with tool calls carries
	// reasoning_content, empty when the model wrote none (a call the
	// runtime wrote). DeepSeek's thinking-mode docs: "for turns that do
	// perform tool calls, the reasoning_content must be fully passed back
	// to the API in all subsequent requests", else 400
	// (https://api-docs.deepseek.com/guides/thinking_mode); an empty
	// placeholder is accepted (leookun/cursor-byok#268).
	deepseek bool
	// gemini: the first call of each assistant message carries a thought
	// signature, the dummy one when Gemini wrote none.
	gemini bool
}

// styleOf reads the reasoning style from the model name and from what
// earlier replies carried.
func styleOf(modelName string, msgs []transcript.Message) reasoningStyle {
	name := strings.ToLower(modelName)
	st := reasoningStyle{deepseek: strings.Contains(name, "deepseek"), gemini: strings.Contains(name, "gemini")}
	for i := range msgs {
		m := &msgs[i]
		if m.ReasoningContent != "" && m.ReasoningField == "" {
			st.deepseek = true
		}
		for _, tc := range m.ToolCalls {
			if tc.ThoughtSignature != "" {
				st.gemini = true
			}
		}
	}
	return st
}

// toWireMessages converts transcript messages to the wire form, with the
// reasoning state each provider requires.
func toWireMessages(msgs []transcript.Message, st reasoningStyle) []wireMessage {
	out := make([]wireMessage, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		w := wireMessage{Role: m.Role, Refusal: m.Refusal, ToolCallID: m.ToolCallID, ReasoningDetails: m.ReasoningDetails}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			w.Content = &m.Content
		}
		switch {
		case m.ReasoningContent == "":
		case m.ReasoningField == "reasoning":
			if len(m.ReasoningDetails) == 0 { // the details carry the same text
				w.Reasoning = m.ReasoningContent
			}
		default:
			w.ReasoningContent = &m.ReasoningContent
		}
		if len(m.ToolCalls) > 0 {
			if st.deepseek && w.ReasoningContent == nil {
				w.ReasoningContent = new(string)
			}
			w.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				w.ToolCalls[j] = wireToolCall{ID: tc.ID, Type: tc.Type, Function: wireFunction{Name: tc.Function.Name, Arguments: tc.Function.Arguments}}
				sig := tc.ThoughtSignature
				if sig == "" && j == 0 && st.gemini {
					sig = skipSignature
				}
				if sig != "" {
					w.ToolCalls[j].ExtraContent = &extraContent{}
					w.ToolCalls[j].ExtraContent.Google.ThoughtSignature = sig
				}
			}
		}
		out[i] = w
	}
	return out
}

// nullMessages is how a ChatCompletionRequest without messages encodes them.
var nullMessages = []byte(`"messages":null`)

// requestBody encodes creq (whose Messages are left empty) with msgs as its
// messages, streamed.
func requestBody(creq openai.ChatCompletionRequest, msgs []wireMessage) ([]byte, error) {
	creq.Messages = nil
	creq.Stream = true
	head, err := json.Marshal(creq)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	i := bytes.Index(head, nullMessages)
	if i < 0 {
		return nil, fmt.Errorf("encode request: no messages field")
	}
	var buf bytes.Buffer
	buf.Grow(len(head) + wireSize(msgs))
	buf.Write(head[:i+len(`"messages":`)])
	if err := json.NewEncoder(&buf).Encode(msgs); err != nil {
		return nil, fmt.Errorf("encode messages: %w", err)
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	buf.Write(head[i+len(nullMessages):])
	return buf.Bytes(), nil
}

// wireSize estimates the encoded size of msgs, to size the buffer once.
func wireSize(msgs []wireMessage) int {
	n := 2
	for i := range msgs {
		m := &msgs[i]
		n += 64 + len(m.ReasoningDetails) + len(m.Reasoning) + len(m.ToolCallID)
		if m.Content != nil {
			n += len(*m.Content) + len(*m.Content)/8
		}
		if m.ReasoningContent != nil {
			n += len(*m.ReasoningContent)
		}
		for _, tc := range m.ToolCalls {
			n += 96 + len(tc.ID) + len(tc.Function.Name) + 2*len(tc.Function.Arguments)
		}
	}
	return n
}
