package fakemodel_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
)

// In Groq mode a failed tool-call generation is Groq's tool_use_failed:
// inside the 200 stream, after the role chunk, a data event carrying the
// error with the generation as failed_generation, then the end of the
// stream, no [DONE]; without streaming, the same error as a 400.
func TestGroqToolUseFailed(t *testing.T) {
	s := fakemodel.NewTB(t)
	s.SetProvider(fakemodel.Groq)
	gen := `<function=save_output{"path":"a.md"}</function>`
	s.Enqueue(fakemodel.Reply{FailedGeneration: gen}, fakemodel.Reply{FailedGeneration: gen})

	body := `{"model":"llama-3.3-70b-versatile","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	events := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	if resp.StatusCode != 200 || len(events) != 2 || !strings.Contains(events[0], `"role":"assistant"`) {
		t.Fatalf("status %d, stream:\n%s", resp.StatusCode, raw)
	}
	last := events[1]
	for _, want := range []string{`data: {"error":`, `"code":"tool_use_failed"`, `"type":"invalid_request_error"`, `"failed_generation":"\u003cfunction=save_output`} {
		if !strings.Contains(last, want) {
			t.Errorf("%s not in the error event %s", want, last)
		}
	}

	_, err = client(s).CreateChatCompletion(t.Context(), chatRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || apiErr.Code != "tool_use_failed" {
		t.Fatalf("without streaming: %v, want Groq's 400", err)
	}

	// Another mode streams the reply's text as usual.
	s.SetProvider(fakemodel.OpenAI)
	s.Enqueue(fakemodel.Reply{Text: "plain", FailedGeneration: gen})
	if got := collect(t, client(s), chatRequest("hi")); got.err != nil || strings.Join(got.deltas, "") != "plain" {
		t.Fatalf("OpenAI mode: %+v", got)
	}
}
