package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
)

// sampleServer is an MCP server whose tool summarize asks the client's
// model (sampling/createMessage) and returns its answer, or the error.
func sampleServer(t *testing.T) string {
	s := sdk.NewServer(&sdk.Implementation{Name: "sampler", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "summarize", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 100, SystemPrompt: "Be brief.",
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "Summarize: the login fails."}}}})
			text := ""
			if err != nil {
				text = "error: " + err.Error()
			} else {
				text = "model said: " + res.Content.(*sdk.TextContent).Text
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// A server's sampling request during a call reaches that call's Sample
// (the engine asks the person, then its model), with the system prompt
// and the messages; a refusal reaches the server as an error.
func TestSamplingGoesToTheCall(t *testing.T) {
	m, _ := setup(t, "servers:\n"+httpEntry(sampleServer(t), "sampler", ""), Options{AskPeople: true})
	tool := get(t, tools(t, m, "sampler"), "sampler__summarize").External()
	var got engine.Sampling
	sample := func(_ context.Context, s engine.Sampling) (engine.SamplingReply, error) {
		got = s
		return engine.SamplingReply{Text: "Login is broken."}, nil
	}
	r, err := tool.Call(context.Background(), json.RawMessage(`{}`), engine.ExternalCall{Progress: func(string) {}, Sample: sample})
	if err != nil || r.Text != "model said: Login is broken." {
		t.Fatalf("call = %q, %v", r.Text, err)
	}
	if got.Source != "sampler" || got.System != "Be brief." || len(got.Messages) != 1 || got.Messages[0].Role != "user" ||
		got.Messages[0].Text != "Summarize: the login fails." {
		t.Fatalf("sampling = %+v", got)
	}
	refuse := func(context.Context, engine.Sampling) (engine.SamplingReply, error) {
		return engine.SamplingReply{}, engine.ErrSamplingRefused
	}
	r, err = tool.Call(context.Background(), json.RawMessage(`{}`), engine.ExternalCall{Progress: func(string) {}, Sample: refuse})
	if err != nil || !strings.HasPrefix(r.Text, "error:") || !strings.Contains(r.Text, "refused") {
		t.Fatalf("a refused sampling: %q, %v", r.Text, err)
	}
}
