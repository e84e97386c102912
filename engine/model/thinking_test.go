package model_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/model"
)

// order records OnReasoning and onText calls in order: "R" for
// reasoning, the text for a delta.
type order struct {
	mu  sync.Mutex
	got []string
}

func (o *order) reasoning() { o.mu.Lock(); o.got = append(o.got, "R"); o.mu.Unlock() }
func (o *order) text(d string) {
	o.mu.Lock()
	o.got = append(o.got, d)
	o.mu.Unlock()
}

// Both adapters say the model is reasoning (never with its text) before
// its answer streams, and say nothing for a model that does not reason.
func TestOnReasoningBeforeText(t *testing.T) {
	for _, tc := range []struct {
		name     string
		provider fakemodel.Provider
		edit     func(*model.Config)
		reasons  bool
	}{
		{"chat, deepseek", fakemodel.DeepSeek, func(c *model.Config) { c.Model = "deepseek-v4-flash" }, true},
		{"chat, openrouter", fakemodel.OpenRouter, func(c *model.Config) { c.Model = "google/gemini-3-pro-preview" }, true},
		{"chat, no reasoning", fakemodel.OpenAI, func(c *model.Config) { c.Model = "gpt-4.1" }, false},
		{"responses, gpt-5.6", fakemodel.OpenAI, func(c *model.Config) { c.API, c.Model = model.APIResponses, "gpt-5.6-terra" }, true},
		{"responses, no reasoning", fakemodel.OpenAI, func(c *model.Config) { c.API, c.Model = model.APIResponses, "gpt-4.1" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakemodel.NewTB(t)
			s.SetProvider(tc.provider)
			s.Enqueue(fakemodel.Reply{Text: "The answer.", Chunks: 3})
			c, _ := newClient(s, tc.edit)
			var o order
			req := userRequest("hi")
			req.OnReasoning = o.reasoning
			resp, err := c.Complete(context.Background(), req, o.text)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "The answer." {
				t.Errorf("content %q", resp.Message.Content)
			}
			first := strings.Join(o.got, "|")
			switch {
			case tc.reasons && (len(o.got) == 0 || o.got[0] != "R"):
				t.Errorf("calls %s: want reasoning first", first)
			case !tc.reasons && strings.Contains(first, "R"):
				t.Errorf("calls %s: reasoning reported for a model that did not reason", first)
			}
			if strings.Contains(first, fakemodel.ReasoningMarker) {
				t.Errorf("the reasoning text reached onText: %s", first)
			}
			seenText := false
			for _, g := range o.got {
				if g != "R" {
					seenText = true
				} else if seenText {
					t.Errorf("reasoning after text: %s", first)
				}
			}
		})
	}
}
