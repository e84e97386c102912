package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
)

// manyTools are n external tools; tool 7 is about invoices, the others
// about widgets. A call returns the tool's name.
func manyTools(n int) []engine.ExternalTool {
	var out []engine.ExternalTool
	for i := range n {
		desc := fmt.Sprintf("Count the widgets of shelf %d.", i)
		if i == 7 {
			desc = "Send an invoice to a customer."
		}
		name := fmt.Sprintf("x__tool_%d", i)
		out = append(out, engine.ExternalTool{Name: name, Server: "x", Description: desc, Policy: engine.PolicyAuto,
			Schema: json.RawMessage(`{"type":"object"}`),
			Call: func(context.Context, json.RawMessage, engine.ExternalCall) (engine.ExternalReply, error) {
				return engine.ExternalReply{Text: "ran " + name}, nil
			}})
	}
	return out
}

// With 200 external tools, every request carries at most 128 (the fake
// model refuses more, as OpenAI does): the built-in tools, find_tools and
// the most relevant others; the tools find_tools finds come next; the
// tools called lately stay offered on the next turn.
func TestToolsChosenUnderTheProviderLimit(t *testing.T) {
	tools := manyTools(200)
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.ExternalTools = func(context.Context, *engine.Session, func(string)) []engine.ExternalTool { return tools }
	}})
	s, _ := h.start("t/choose", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "f1", Name: "find_tools", Arguments: `{"query":"invoice"}`}}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "c1", Name: "x__tool_7", Arguments: `{}`}, {ID: "c2", Name: "x__tool_199", Arguments: `{}`}}},
		fakemodel.Reply{Text: "sent"},
	)
	if r := h.turn(s, "count widgets please"); r.Text != "sent" {
		t.Fatalf("turn = %+v", r)
	}
	reqs := h.fm.Requests()
	for i, req := range reqs {
		names := toolNamesOf(req)
		if len(names) > engine.MaxToolDefinitions || !slices.Contains(names, "find_tools") || !slices.Contains(names, "read_file") {
			t.Fatalf("request %d offers %d tools", i+1, len(names))
		}
	}
	if first := toolNamesOf(reqs[0]); slices.Contains(first, "x__tool_7") {
		t.Errorf("the invoice tool is offered for widgets")
	}
	if second := toolNamesOf(reqs[1]); !slices.Contains(second, "x__tool_7") {
		t.Errorf("the found tool is not offered next")
	}
	if found, _ := resultOf(t, reqs[1], "f1")["result"].(string); !strings.HasPrefix(found, "These tools are offered") || !strings.Contains(found, "x__tool_7: Send an invoice") {
		t.Errorf("find_tools = %q", found)
	}
	for id, want := range map[string]string{"c1": "ran x__tool_7", "c2": "ran x__tool_199"} {
		if got, _ := resultOf(t, reqs[2], id)["result"].(string); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	// Next turn, about something else: the invoice tool, called lately, stays.
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "f2", Name: "find_tools", Arguments: `{"query":"zebra"}`}}}, fakemodel.Reply{Text: "ok"})
	h.turn(s, "count more widgets")
	reqs = h.fm.Requests()
	if next := toolNamesOf(reqs[3]); !slices.Contains(next, "x__tool_7") {
		t.Errorf("a tool called lately is not offered")
	}
	if none, _ := resultOf(t, reqs[4], "f2")["result"].(string); !strings.Contains(none, "no tool matches") {
		t.Errorf("find_tools without a match = %q", none)
	}
}
