package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/mcptest"
)

// A server that never answers costs the first turn one cold wait (up to
// its connect timeout: it never listed its tools in this process), every
// later turn only the listing budget, and the user is told once per
// session that its tools are unavailable; the other server's tools are
// offered all the same.
func TestUnavailableServerToldOnce(t *testing.T) {
	web := mcptest.NewHTTPServer(t)
	y := webConfig(web.URL, "") + "  - name: hung\n    transport: stdio\n    command: sleep\n    args: [\"3600\"]\n    timeout: 1s\n"
	cfg, probs, err := mcp.ParseConfig([]byte(y), func(string) string { return "" })
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	mgr := mcp.NewManager(cfg, mcp.Options{ListBudget: 200 * time.Millisecond})
	t.Cleanup(func() { mgr.Close() })
	mgr.Warm([]string{"web", "hung"})
	mgr.ToolsWait(context.Background(), []string{"web"})
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.ExternalTools = mgr.SessionTools(func(*engine.Session) []string { return []string{"hung", "web"} }, nil)
	}})
	s, _ := h.start("t/hung", "product-lead")
	for i := range 3 {
		h.fm.Enqueue(fakemodel.Reply{Text: "ok"})
		start := time.Now()
		h.turn(s, fmt.Sprintf("message %d", i))
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("turn %d took %s", i, took)
		}
		if names := toolNamesOf(h.fm.Requests()[i]); !slices.Contains(names, "web__echo") {
			t.Fatalf("turn %d offers %v", i, names)
		}
	}
	notices := h.eventsOf(engine.EventNotice)
	if len(notices) != 1 || !strings.Contains(notices[0].Text, "MCP server hung are unavailable") {
		t.Fatalf("notices = %+v", notices)
	}
}

// The audio a tool returns is saved as a document and shared; two calls
// in one response get two documents, never one over the other.
func TestToolFilesSavedAsDocuments(t *testing.T) {
	web := mcptest.NewHTTPServer(t)
	h, _ := mcpHarness(t, webConfig(web.URL, "    policy: {audio: auto}\n"))
	s, _ := h.start("t/audio", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
		{ID: "a1", Name: "web__audio", Arguments: `{}`}, {ID: "a2", Name: "web__audio", Arguments: `{}`}}},
		fakemodel.Reply{Text: "ok"})
	h.turn(s, "beep twice")
	var saved []string
	for _, ev := range h.eventsOf(engine.EventOutput) {
		saved = append(saved, ev.Output.Path)
		if data, err := os.ReadFile(ev.HostPath); err != nil || string(data) != string(mcptest.Wav) {
			t.Errorf("%s on disk: %d bytes, %v", ev.Output.Path, len(data), err)
		}
	}
	slices.Sort(saved)
	if !slices.Equal(saved, []string{"audio-1-2.wav", "audio-1.wav"}) {
		t.Fatalf("saved = %v", saved)
	}
	req := h.fm.Requests()[1]
	for _, id := range []string{"a1", "a2"} {
		if got, _ := resultOf(t, req, id)["result"].(string); !strings.HasPrefix(got, "a beep\n[audio/wav, 52 bytes: saved to /outputs/audio-1") {
			t.Errorf("%s = %q", id, got)
		}
	}
}

// A tool's sampling asks the turn's person first; allowed, the agent's
// model answers without tools (system prompt and messages as asked), the
// tool gets the answer, and the tokens count in the turn's usage; refused,
// the model is not called.
func TestSamplingAskedThenAnswered(t *testing.T) {
	var asked []engine.Question
	allow := engine.AnswerAccept
	var got []string
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.Ask = func(_ context.Context, s *engine.Session, q engine.Question) (engine.Answer, error) {
			asked = append(asked, q)
			return engine.Answer{Action: allow}, nil
		}
		c.ExternalTools = func(context.Context, *engine.Session, func(string)) []engine.ExternalTool {
			return []engine.ExternalTool{{Name: "tracker__summarize", Server: "tracker", Policy: engine.PolicyAuto,
				Schema: json.RawMessage(`{"type":"object"}`),
				Call: func(ctx context.Context, _ json.RawMessage, call engine.ExternalCall) (engine.ExternalReply, error) {
					r, err := call.Sample(ctx, engine.Sampling{Source: "tracker", System: "Be brief.",
						Messages: []engine.SamplingMessage{{Role: "user", Text: "Summarize the login bug."}}})
					if err != nil {
						got = append(got, "refused: "+err.Error())
						return engine.ExternalReply{Text: err.Error(), IsError: true}, nil
					}
					got = append(got, r.Text)
					return engine.ExternalReply{Text: r.Text}, nil
				}}}
		}
	}})
	s, _ := h.start("t/sample", "product-lead")
	s.Person = "UANN"
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "s1", Name: "tracker__summarize", Arguments: `{}`}},
		Usage: fakemodel.Usage{Prompt: 100, Completion: 10}},
		fakemodel.Reply{Text: "Login is broken.", Usage: fakemodel.Usage{Prompt: 7, Completion: 5}},
		fakemodel.Reply{Text: "Done.", Usage: fakemodel.Usage{Prompt: 120, Completion: 3}})
	res := h.turn(s, "summarize it")
	if len(asked) != 1 || asked[0].Source != "tracker" || !strings.Contains(asked[0].Message, "Summarize the login bug.") {
		t.Fatalf("asked = %+v", asked)
	}
	if len(got) != 1 || got[0] != "Login is broken." {
		t.Fatalf("the tool got %v", got)
	}
	reqs := h.fm.Requests()
	if len(reqs) != 3 || len(reqs[1].Tools) != 0 || reqs[1].Messages[0].Content != "Be brief." {
		t.Fatalf("the sampling request: %d requests, %+v", len(reqs), reqs[1])
	}
	if res.Usage.Prompt != 227 || res.Usage.Calls != 3 {
		t.Fatalf("turn usage = %+v, want the sampling's tokens counted", res.Usage)
	}

	allow = engine.AnswerDecline
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "s2", Name: "tracker__summarize", Arguments: `{}`}}},
		fakemodel.Reply{Text: "Not summarized."})
	h.turn(s, "again")
	if len(got) != 2 || !strings.Contains(got[1], "refused") || len(h.fm.Requests()) != 5 {
		t.Fatalf("a refused sampling: %v, %d requests", got, len(h.fm.Requests()))
	}
}
