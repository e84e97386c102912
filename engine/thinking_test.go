package engine_test

import (
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/model"
)

// A reasoning model's turn says "thinking" once per model call, before
// that call's text and without the reasoning; a model that does not reason
// never does. The turn's usage counts the reasoning tokens.
func TestTurnThinkingEvents(t *testing.T) {
	h := newHarness(t, harnessOpts{modelCfg: func(c *model.Config) { c.Model = "deepseek-v4-flash" }})
	h.fm.SetProvider(fakemodel.DeepSeek)
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}},
		fakemodel.Reply{Text: "Read it.", Chunks: 3},
	)
	s, _ := h.start("k1", "product-lead")
	res := h.turn(s, "read the config")
	var kinds []string
	h.mu.Lock()
	for _, ev := range h.events {
		if ev.Kind == engine.EventThinking || ev.Kind == engine.EventText || ev.Kind == engine.EventToolStart {
			kinds = append(kinds, string(ev.Kind))
		}
		if ev.Kind == engine.EventThinking && ev.Text != "" {
			t.Errorf("a thinking event carries text %q", ev.Text)
		}
		if strings.Contains(ev.Text, fakemodel.ReasoningMarker) {
			t.Errorf("reasoning in an event: %+v", ev)
		}
	}
	h.mu.Unlock()
	got := strings.Join(kinds, ",")
	if !strings.HasPrefix(got, "thinking,tool_start") || !strings.Contains(got, ",thinking,text") || strings.Count(got, "thinking") != 2 {
		t.Errorf("events %s: want thinking before each call's output, once per call", got)
	}
	if res.Usage.Reasoning == 0 || s.Usage.Reasoning != res.Usage.Reasoning {
		t.Errorf("reasoning tokens: turn %d, session %d", res.Usage.Reasoning, s.Usage.Reasoning)
	}

	plain := newHarness(t, harnessOpts{})
	plain.fm.Enqueue(fakemodel.Reply{Text: "No thought needed."})
	ps, _ := plain.start("k2", "product-lead")
	plain.turn(ps, "hi")
	if n := len(plain.eventsOf(engine.EventThinking)); n != 0 {
		t.Errorf("%d thinking events from a model that does not reason", n)
	}
}
