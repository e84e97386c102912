package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
)

// A provider whose replies never report usage does not switch context
// management off: the estimate alone keeps every request under the
// window, and the session learns no ratio from the missing counts.
func TestContextWithoutUsage(t *testing.T) {
	const budget = 24000
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) { c.ContextBudget = budget; c.Store = nil }})
	h.fm.SetContextWindow(budget)
	s, _ := h.start("t/nousage", "product-lead")
	longSession(h, func(req fakemodel.Request) fakemodel.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == transcript.RoleUser {
			doc := strings.Repeat("The reorder button lets a buyer repeat an order. ", 8*1024/49)
			return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": doc})}, Chunks: 1, NoUsage: true}
		}
		return fakemodel.Reply{Text: "Saved. Next step?", Chunks: 1, NoUsage: true}
	})
	for i := 1; i <= 20; i++ { // 20 saves of 8 KB: about 80k tokens unmanaged
		if res := h.turn(s, fmt.Sprintf("step %d", i)); res.Text != "Saved. Next step?" {
			t.Fatalf("turn %d: %+v", i, res)
		}
	}
	for _, req := range h.fm.Requests() {
		if n := len(req.Raw) / 4; n > budget {
			t.Fatalf("request %d of about %d tokens passed the %d window", req.N, n, budget)
		}
	}
	if s.Elided == 0 && s.Compactions == 0 {
		t.Error("nothing was elided or compacted")
	}
	if s.TokenRatio != 0 || s.Usage.Prompt != 0 {
		t.Errorf("learned from replies without usage: ratio %v, prompt %d", s.TokenRatio, s.Usage.Prompt)
	}
}
