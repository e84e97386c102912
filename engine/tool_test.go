package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine/transcript"
)

// Every registered tool is whole: a schema that is a JSON object schema, a
// description, a status line, a run and a summary, and bad arguments give an
// error result that keeps what the model sent.
func TestToolsAreWhole(t *testing.T) {
	tools := allTools()
	if len(tools) < 3 {
		t.Fatalf("only %d tools registered", len(tools))
	}
	for i, tl := range tools {
		if i > 0 && tools[i-1].Name >= tl.Name {
			t.Errorf("tools not sorted by name: %s before %s", tools[i-1].Name, tl.Name)
		}
		var schema struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal([]byte(tl.Schema), &schema); err != nil || schema.Type != "object" || len(schema.Properties) == 0 {
			t.Errorf("%s: schema is not an object schema with properties (%v): %s", tl.Name, err, tl.Schema)
		}
		if tl.Description == "" || tl.Status == nil || tl.Run == nil || tl.Summary == nil {
			t.Errorf("%s: missing description, status, run or summary", tl.Name)
		}
		if st := tl.Status(`{not json`); st == "" {
			t.Errorf("%s: empty status line for bad arguments", tl.Name)
		}
		r := tl.Run(context.Background(), &toolEnv{s: &Session{}}, `{not json`)
		if r.Failure() == "" || !strings.Contains(r.Failure(), "invalid JSON arguments for "+tl.Name) {
			t.Errorf("%s: bad JSON gave %#v", tl.Name, r)
		}
		enc := encodeResult(r)
		if !strings.Contains(enc, `"raw_arguments":"{not json"`) {
			t.Errorf("%s: error result lacks the raw arguments: %s", tl.Name, enc)
		}
		if sum := tl.Summary(`{}`, enc); !strings.HasPrefix(sum, "error: invalid JSON") {
			t.Errorf("%s: summary of an error result = %q", tl.Name, sum)
		}
	}
}

// An unknown tool, or one the session is not offered, is an error result
// naming the tools there are.
func TestUnknownTool(t *testing.T) {
	env := &toolEnv{e: New(Config{}), s: &Session{}}
	r := env.runCall(context.Background(), transcript.ToolCall{Function: transcript.FunctionCall{Name: "rm_rf", Arguments: "{}"}})
	if !strings.Contains(r.Failure(), `unknown tool "rm_rf"`) || !strings.Contains(r.Failure(), ToolReadFile) {
		t.Fatalf("unknown tool gave %q", r.Failure())
	}
}

// A result that encodes to nothing is replaced by an error, never sent empty.
func TestEncodeResultNeverEmpty(t *testing.T) {
	if got := encodeResult(ReadResult{Path: "/x", Note: "the file is empty"}); !strings.Contains(got, `"content":""`) {
		t.Fatalf("empty file result = %s", got)
	}
	if got := encodeResult(ErrorResult{}); got == "" || got == "{}" {
		t.Fatalf("empty error result encoded as %q", got)
	}
}
