package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/engine/transcript"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage"
)

// A workflow of our own bundle, from menu pick to a saved output on disk:
// the pick costs exactly one model call before the first question.
func TestBundleWorkflowFromMenuPickToSavedOutput(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, harnessOpts{})
	s, g := h.start("t/brief", "product-lead")
	if h.fm.Calls() != 0 {
		t.Fatalf("activation made %d model calls, want 0", h.fm.Calls())
	}
	contains(t, g.Text, "*brief", "greeting menu")
	contains(t, g.Text, "Maren", "greeting")

	h.fm.Enqueue(fakemodel.Reply{Text: "Great — what's the feature idea, in a sentence or two?"})
	res := h.turn(s, "*brief")
	if h.fm.Calls() != 1 {
		t.Fatalf("menu pick to first question took %d model calls, want 1", h.fm.Calls())
	}
	if res.Text == "" || !strings.Contains(res.Text, "feature idea") {
		t.Fatalf("answer = %q", res.Text)
	}
	req := h.fm.Requests()[0]
	results := toolResults(t, req)
	if len(results) != 1 {
		t.Fatalf("first request has %d tool results, want the one preload", len(results))
	}
	pre := results[0]
	if pre["error"] != nil {
		t.Fatalf("preload failed: %v", pre["error"])
	}
	for _, k := range []string{"workflow_yaml", "instructions", "template", "config", "workflow_engine", "elicitation"} {
		if pre[k] == nil {
			t.Errorf("preload result lacks %s; has %v", k, keys(pre))
		}
	}
	wy, _ := pre["workflow_yaml"].(string)
	contains(t, wy, "/project/workflows/product-brief/instructions.md", "resolved installed_path")
	contains(t, wy, "/outputs", "output_folder resolves to the session folder")
	if strings.Contains(wy, h.dir) {
		t.Fatalf("host path leaked into the preload result")
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != transcript.RoleUser || !strings.Contains(last.Content, "picked menu item") {
		t.Fatalf("last message should tell the model which item was picked, got %+v", last)
	}

	// The user answers; the model saves the brief and asks the next question.
	doc := "# Product brief: one-click reorder\n\nProblem: repeat buyers rebuild carts by hand.\n"
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{output_folder}/product-brief-reorder.md", "content": doc})}},
		fakemodel.Reply{Text: "Saved the problem statement. Who has this problem most?"},
	)
	h.turn(s, "Repeat buyers want to reorder a past cart in one click.")
	outDir, _ := h.st.OutputDir(s.ID)
	got, err := os.ReadFile(filepath.Join(outDir, "product-brief-reorder.md"))
	if err != nil || string(got) != doc {
		t.Fatalf("saved output = %q, %v", got, err)
	}
	outs := h.eventsOf(engine.EventOutput)
	if len(outs) != 1 || outs[0].Output.Path != "product-brief-reorder.md" || outs[0].Output.Version != 1 || outs[0].HostPath == "" {
		t.Fatalf("output events = %+v", outs)
	}
	if len(s.Outputs) != 1 {
		t.Fatalf("session outputs = %+v", s.Outputs)
	}
	// A re-save is a new version.
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "product-brief-reorder.md", "content": doc + "\nUsers: repeat buyers.\n"})}},
		fakemodel.Reply{Text: "Updated."},
	)
	h.turn(s, "Mostly B2B repeat buyers.")
	if outs := h.eventsOf(engine.EventOutput); len(outs) != 2 || outs[1].Output.Version != 2 {
		t.Fatalf("re-save should be v2: %+v", outs)
	}
	// Stored: a reopened session has the whole transcript and outputs.
	stored, err := storage.Session(ctx, h.st, "t/brief")
	if err != nil || len(stored.Messages) != len(s.Messages) || len(stored.Outputs) != 2 {
		t.Fatalf("stored session: %v, %d messages (want %d)", err, len(stored.Messages), len(s.Messages))
	}
}

// A real BMAD workflow from the alpha.5 install: the analyst's *product-brief.
func TestBMADProductBriefFromMenuPickToSavedOutput(t *testing.T) {
	root := fixtures.Dir(t, fixtures.Alpha5)
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	s, g := h.start("t/bmad", "analyst")
	contains(t, g.Text, "BMad", "greeting uses {user_name} from bmm/config.yaml")
	if s.Vars["user_name"] != "BMad" || s.Vars["output_folder"] != "/outputs" {
		t.Fatalf("vars: user_name=%q output_folder=%q", s.Vars["user_name"], s.Vars["output_folder"])
	}
	h.fm.Enqueue(fakemodel.Reply{Text: "What's the product you have in mind?"})
	h.turn(s, "*product-brief")
	if h.fm.Calls() != 1 {
		t.Fatalf("model calls = %d, want 1", h.fm.Calls())
	}
	pre := toolResults(t, h.fm.Requests()[0])[0]
	if pre["error"] != nil {
		t.Fatalf("preload: %v", pre["error"])
	}
	eng, _ := pre["workflow_engine"].(map[string]any)
	if eng == nil || eng["path"] != "/project/bmad/core/tasks/workflow.xml" {
		t.Fatalf("workflow engine = %v", eng)
	}
	instr, _ := pre["instructions"].(map[string]any)
	contains(t, instr["content"].(string), "Product Brief", "instructions")
	wy := pre["workflow_yaml"].(string)
	contains(t, wy, "BMad", "user_name from config_source")
	contains(t, wy, "{{project_name}}", "double placeholders stay for the model")

	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{output_folder}/product-brief-acme-2026-11-21.md", "content": "# Product Brief: Acme\n"})}},
		fakemodel.Reply{Text: "Saved. Next: who are the users?"},
	)
	h.turn(s, "Acme: a tool for tracking office plants.")
	outDir, _ := h.st.OutputDir(s.ID)
	if _, err := os.Stat(filepath.Join(outDir, "product-brief-acme-2026-11-21.md")); err != nil {
		t.Fatalf("output not on disk: %v", err)
	}
}

// Every request of a session extends the previous one byte for byte, and the
// system prompt is identical across sessions and days.
func TestRequestsExtendPreviousAndPromptIsStable(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	s, _ := h.start("t/ext", "product-lead")
	h.fm.Enqueue(
		fakemodel.Reply{Text: "What's the idea?"},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"}), call("read_file", map[string]string{"path": "/core/tasks/workflow.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "a.md", "content": "x"})}},
		fakemodel.Reply{Text: "Done."},
		fakemodel.Reply{Text: "Anything else?"},
	)
	h.turn(s, "*brief")
	h.turn(s, "An idea")
	h.turn(s, "no")
	reqs := h.fm.Requests()
	if len(reqs) != 5 {
		t.Fatalf("requests = %d", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		prev, cur := messagesJSON(t, reqs[i-1]), messagesJSON(t, reqs[i])
		if len(cur) <= len(prev) {
			t.Fatalf("request %d has %d messages, previous %d", i, len(cur), len(prev))
		}
		for j := range prev {
			if !bytes.Equal(prev[j], cur[j]) {
				t.Fatalf("request %d message %d differs from the previous request:\n%s\n%s", i, j, prev[j], cur[j])
			}
		}
		if !bytes.Equal(toolsJSON(t, reqs[i-1]), toolsJSON(t, reqs[i])) {
			t.Fatalf("tool definitions changed between requests")
		}
	}
	// Parallel tool calls: results in call order.
	res := toolResults(t, reqs[2])
	if p, _ := res[len(res)-2]["path"].(string); p != "/project/config.yaml" {
		t.Fatalf("first result is for %q, want /project/config.yaml", p)
	}
	if p, _ := res[len(res)-1]["path"].(string); p != "/core/tasks/workflow.md" {
		t.Fatalf("second result is for %q", p)
	}

	// Another session, another day: the same system prompt, byte for byte.
	h2 := newHarness(t, harnessOpts{mutate: func(c *engine.Config) {
		c.Now = func() time.Time { return time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC) }
	}})
	s2, _ := h2.start("t/other", "product-lead")
	if s2.Messages[0].Content != s.Messages[0].Content {
		t.Fatalf("system prompt differs between sessions")
	}
	if strings.Contains(s.Messages[0].Content, "2026") || strings.Contains(s.Messages[0].Content, s.ID) {
		t.Fatalf("system prompt holds a date or an id")
	}
	contains(t, s.Messages[1].Content, "2026-11-21", "the date is in a message")
	for _, want := range []string{"## Persona", "## Menu", "read_file", "never merely acknowledge", "{user_name}"} {
		contains(t, s.Messages[0].Content, want, "system prompt")
	}
}

func messagesJSON(t testing.TB, r fakemodel.Request) []json.RawMessage {
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Messages
}

func toolsJSON(t testing.TB, r fakemodel.Request) []byte {
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Tools
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Every agent of the alpha.5 install starts, without a model call; a file an
// activation names that the install lacks is noted for the model instead.
func TestEveryBMADAgentActivates(t *testing.T) {
	ctx := context.Background()
	root := fixtures.Dir(t, fixtures.Alpha5)
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	n := 0
	for _, a := range h.cat.Agents {
		if a.Home == nil || a.Home.Kind != "bmad" {
			continue
		}
		n++
		s, err := live(h.st.NewSession(ctx, "t/all/"+a.ID))
		if err != nil {
			t.Fatal(err)
		}
		g, err := h.eng.Activate(context.Background(), s, a)
		if err != nil {
			t.Errorf("%s: %v", a.ID, err)
			continue
		}
		if len(g.Menu) != len(a.Menu) || !strings.Contains(g.Text, a.Name) {
			t.Errorf("%s: greeting %q", a.ID, g.Text)
		}
		if a.ID == "tech-writer" {
			contains(t, s.Messages[1].Content, "documentation-standards.md, named in your activation, does not exist", "missing activation file noted")
		}
	}
	if n != 15 || h.fm.Calls() != 0 {
		t.Fatalf("activated %d agents with %d model calls; want 15 and 0", n, h.fm.Calls())
	}
}

// A caller's user_name overrides the config's, in the greeting and prompt.
func TestCallerVarsOverrideConfig(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, harnessOpts{})
	s, err := live(h.st.NewSession(ctx, "t/name"))
	if err != nil {
		t.Fatal(err)
	}
	s.Vars = map[string]string{"user_name": "Ana", "output_folder": "/etc"}
	g, err := h.eng.Activate(context.Background(), s, h.agent("product-lead"))
	if err != nil {
		t.Fatal(err)
	}
	contains(t, g.Text, "Hello Ana!", "greeting")
	if s.Vars["output_folder"] != "/outputs" {
		t.Fatalf("a caller may not move the output folder: %q", s.Vars["output_folder"])
	}
}

// AGENTBOT_CORE_ROOT replaces the embedded core for bundles.
func TestCoreRootOverride(t *testing.T) {
	core := t.TempDir()
	os.MkdirAll(filepath.Join(core, "tasks"), 0o755)
	os.WriteFile(filepath.Join(core, "tasks", "workflow.md"), []byte("OUR OWN ENGINE"), 0o644)
	h := newHarness(t, harnessOpts{mutate: func(c *engine.Config) { c.CoreRoot = core }})
	s, _ := h.start("t/core", "product-lead")
	h.fm.Enqueue(fakemodel.Reply{Text: "ok"})
	h.turn(s, "*brief")
	pre := toolResults(t, h.fm.Requests()[0])[0]
	eng, _ := pre["workflow_engine"].(map[string]any)
	if eng == nil || eng["content"] != "OUR OWN ENGINE" {
		t.Fatalf("workflow engine = %v", eng)
	}
}
