package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/text"
)

// The chat adapter reads the server-sent events of a stream itself.
// go-openai's stream reader (stream_reader.go, v1.43) cannot tell the errors
// providers send inside a 200 stream from answers:
//   - it decodes each data line into ChatCompletionStreamResponse, which
//     has no error field, so OpenRouter's error chunk (an "error" object
//     beside choices whose finish_reason is "error") reads as a finished,
//     empty answer;
//   - it skips "event:" lines, so an "event: error" line's data is taken
//     for a chunk, or surfaces as "unexpected end of JSON input";
//   - it counts comment lines (": OPENROUTER PROCESSING", sent every few
//     seconds while a model thinks) as empty messages and fails after 300
//     of them (ErrTooManyEmptyStreamMessages);
//   - its delta types lack reasoning, reasoning_details and
//     tool_calls[].extra_content.
// So the adapter builds the HTTP request (go-openai still encodes the
// request's body) and parses the stream as the SSE format says
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): lines
// starting with ":" are comments, "event:" names the next event, "data:"
// lines up to a blank line are one event.

// maxLine bounds one line of a stream (a tool call's arguments may come
// in one chunk).
const maxLine = 64 << 20

// sseReader reads the events of a stream.
type sseReader struct {
	r    *bufio.Reader
	data bytes.Buffer
	line []byte
}

// newSSEReader reads events from body.
func newSSEReader(body io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(body, 4<<10)} // longer lines are joined (readLine)
}

// next returns the next event's name ("" for a plain message) and data.
// It returns io.EOF at the end of the stream; an event cut by the end of
// the stream is still returned.
func (s *sseReader) next() (event string, data []byte, err error) {
	s.data.Reset()
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && s.data.Len() > 0 {
				return event, s.data.Bytes(), nil
			}
			return "", nil, err
		}
		switch {
		case len(line) == 0:
			if s.data.Len() > 0 {
				return event, s.data.Bytes(), nil
			}
			event = "" // an event with no data is dropped
		case line[0] == ':':
			// a comment: a keep-alive
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				event = string(value)
			case "data":
				if s.data.Len() > 0 {
					if json.Valid(s.data.Bytes()) {
						// A server that sends data lines without the blank
						// line between events: this line starts the next.
						s.unread(line)
						return event, s.data.Bytes(), nil
					}
					s.data.WriteByte('\n')
				}
				s.data.Write(value)
			}
		}
	}
}

// readLine returns the next line without its end (\n, \r\n or \r).
func (s *sseReader) readLine() ([]byte, error) {
	if s.line != nil {
		l := s.line
		s.line = nil
		return l, nil
	}
	var buf []byte
	for {
		part, isPrefix, err := s.r.ReadLine()
		if err != nil {
			if len(buf) > 0 && errors.Is(err, io.EOF) {
				return buf, nil
			}
			return nil, err
		}
		if !isPrefix && buf == nil {
			return part, nil
		}
		buf = append(buf, part...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("stream line longer than %d bytes", maxLine)
		}
		if !isPrefix {
			return buf, nil
		}
	}
}

// unread makes line the next one readLine returns.
func (s *sseReader) unread(line []byte) {
	s.line = append([]byte(nil), line...)
}

// streamChunk is one chat.completion.chunk, with the fields providers add.
// Fields it does not name are ignored.
type streamChunk struct {
	Choices []struct {
		Index        int         `json:"index"`
		Delta        streamDelta `json:"delta"`
		FinishReason *string     `json:"finish_reason"`
	} `json:"choices"`
	Usage *streamUsage `json:"usage"`
	// Error is OpenRouter's in-stream error
	// (https://openrouter.ai/docs/api-reference/errors: "errors during
	// streaming" arrive as a chunk with error and finish_reason "error").
	Error *wireError `json:"error"`
}

type streamDelta struct {
	Content string `json:"content"`
	Refusal string `json:"refusal"`
	// ReasoningContent is DeepSeek's and vLLM's; Reasoning OpenRouter's
	// (and newer vLLM's); ReasoningDetails OpenRouter's structured form.
	ReasoningContent string            `json:"reasoning_content"`
	Reasoning        string            `json:"reasoning"`
	ReasoningDetails []json.RawMessage `json:"reasoning_details"`
	ToolCalls        []wireToolCall    `json:"tool_calls"`
}

type streamUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	// CompletionTokensDetails names the reasoning part of the completion
	// (OpenAI: "completion_tokens_details": {"reasoning_tokens": ...},
	// https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage;
	// DeepSeek and OpenRouter send the same field).
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// wireError is an error object as providers send it, in a body or a stream.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Param   *string         `json:"param"`
	Code    json.RawMessage `json:"code"`
	Status  json.RawMessage `json:"status"` // Google's ("INVALID_ARGUMENT")
	// NCtx is the context size llama.cpp's server names in an
	// exceed_context_size_error (ggml-org/llama.cpp#15780).
	NCtx     int `json:"n_ctx"`
	Metadata *struct {
		Raw          json.RawMessage `json:"raw"`
		ProviderName string          `json:"provider_name"`
	} `json:"metadata"`
}

// apiError converts e to go-openai's error type, which the retry rules and
// the context checks read; status is the HTTP status, 0 inside a stream.
// OpenRouter's metadata.raw (the upstream provider's own message) is added
// to the message, since "Provider returned error" alone says nothing.
func (e *wireError) apiError(status int) *openai.APIError {
	out := &openai.APIError{Message: e.Message, Type: e.Type, Param: e.Param, HTTPStatusCode: status}
	if status != 0 {
		out.HTTPStatus = http.StatusText(status)
	}
	var code any
	if json.Unmarshal(e.Code, &code) == nil && code != nil {
		if f, ok := code.(float64); ok {
			out.Code = int(f)
		} else {
			out.Code = code
		}
	}
	var googleStatus string
	if out.Type == "" && json.Unmarshal(e.Status, &googleStatus) == nil && googleStatus != "" {
		out.Type = googleStatus
	}
	if e.NCtx > 0 {
		out.Message = fmt.Sprintf("%s (n_ctx %d)", out.Message, e.NCtx)
	}
	if detail := e.upstream(); detail != "" {
		out.Message = fmt.Sprintf("%s (%s)", out.Message, detail)
	}
	if out.Message == "" {
		out.Message = "the provider sent an error without a message"
	}
	return out
}

// upstream is OpenRouter's metadata: "provider: raw message", bounded, or
// "" when there is none.
func (e *wireError) upstream() string {
	m := e.Metadata
	if m == nil || len(m.Raw) == 0 || string(m.Raw) == "null" {
		return ""
	}
	raw := string(m.Raw)
	var s string
	if json.Unmarshal(m.Raw, &s) == nil {
		raw = s
	}
	raw = strings.TrimSpace(raw)
	if len(raw) > maxDetail {
		raw = text.CutBytes(raw, maxDetail, "...")
	}
	who := "provider"
	if m.ProviderName != "" {
		who = m.ProviderName
	}
	return who + ": " + raw
}

// errorBody reads an error response: {"error":{...}} (OpenAI and most),
// Gemini's [{"error":{...}}], or {"message":...} (some local servers). It
// returns a *openai.APIError when the body has a message, else a
// *openai.RequestError with the body.
func errorBody(status int, body []byte) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(trimmed, &list) == nil && len(list) > 0 {
			trimmed = list[0]
		}
	}
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
	}
	if json.Unmarshal(trimmed, &env) == nil {
		var we wireError
		if len(env.Error) > 0 && json.Unmarshal(env.Error, &we) == nil && we.Message != "" {
			return we.apiError(status)
		}
		var text string
		if len(env.Error) > 0 && json.Unmarshal(env.Error, &text) == nil && text != "" {
			return (&wireError{Message: text}).apiError(status) // Ollama, llama.cpp: {"error":"..."}
		}
		if env.Message != "" {
			return (&wireError{Message: env.Message, Type: env.Type}).apiError(status)
		}
	}
	return &openai.RequestError{
		HTTPStatus:     http.StatusText(status),
		HTTPStatusCode: status,
		Err:            fmt.Errorf("status %d", status),
		Body:           body,
	}
}

// streamError converts the data of an "event: error" line.
func streamError(data []byte) error {
	var env struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(data, &env) == nil && env.Error != nil && env.Error.Message != "" {
		return env.Error.apiError(0)
	}
	var we wireError
	if json.Unmarshal(data, &we) == nil && we.Message != "" {
		return we.apiError(0)
	}
	msg := strings.TrimSpace(string(data))
	if len(msg) > maxDetail {
		msg = text.CutBytes(msg, maxDetail, "...")
	}
	if msg == "" {
		msg = "the stream sent an error event without data"
	}
	return &openai.APIError{Message: msg}
}
