package bot_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/model"
)

// slackModes are the fake model's provider modes with the settings a user
// of each gives agentbot; kept is what a request after a restart or a
// takeover must still carry of the first tool call's reasoning state.
var slackModes = []struct {
	name     string
	provider fakemodel.Provider
	model    string
	azure    bool
	kept     string
}{
	{name: "openai", provider: fakemodel.OpenAI, model: "gpt-4.1"},
	{name: "deepseek", provider: fakemodel.DeepSeek, model: "deepseek-v4-flash", kept: `"reasoning_content":"The user asked something; request 1 needs a careful answer."`},
	{name: "openrouter", provider: fakemodel.OpenRouter, model: "google/gemini-3-pro-preview", kept: `"data":"or-sig-1"`},
	{name: "gemini", provider: fakemodel.Gemini, model: "gemini-3-flash-preview", kept: `"thought_signature":"gemini-sig-1"`},
	{name: "mistral", provider: fakemodel.Mistral, model: "mistral-medium-latest"},
	{name: "azure", provider: fakemodel.Azure, model: "gpt-5-prod", azure: true},
}

// modelFor is a model client for the fake in a provider mode.
func modelFor(fm *fakemodel.Server, name string, azure bool) *model.Client {
	cfg := model.Config{APIKey: "k", BaseURL: fm.URL(), Model: name,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}
	if azure {
		cfg.APIType, cfg.BaseURL = "azure", fm.RootURL()
	}
	return model.New(cfg)
}

// For every provider mode, through Slack: a menu pick that starts a
// workflow, two parallel tool calls and a streamed answer, a second turn,
// a restart and a third turn. Every request passes the provider's checks;
// the reasoning state survives the restart; none of it reaches Slack.
func TestSlackEveryProvider(t *testing.T) {
	for _, pm := range slackModes {
		t.Run(pm.name, func(t *testing.T) {
			fm := fakemodel.NewTB(t)
			fm.SetProvider(pm.provider)
			fm.Enqueue(
				fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
					{Name: "read_file", Arguments: `{"path":"/outputs/a.md"}`},
					{Name: "read_file", Arguments: `{"path":"/outputs/b.md"}`},
				}},
				fakemodel.Reply{Text: "Who is the reorder button for?", Chunks: 5},
				fakemodel.Reply{Text: "Returning shoppers, noted."},
				fakemodel.Reply{Text: "Third turn answered."},
			)
			r := newRig(t, rigOpts{engine: func(c *engine.Config) { c.Model = modelFor(fm, pm.model, pm.azure) }})
			if err := r.st.SetChannelDefault(r.slack.TeamID(), channel, "product-lead"); err != nil {
				t.Fatal(err)
			}
			thread, _ := r.mention("*brief", "")
			r.waitText(thread, "Who is the reorder button for?")
			r.reply("Returning shoppers", thread)
			r.waitText(thread, "Returning shoppers, noted.")
			r.restart()
			r.reply("And now?", thread)
			r.waitText(thread, "Third turn answered.")

			reqs := fm.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d model calls, want 4", len(reqs))
			}
			if pm.kept != "" && !strings.Contains(string(reqs[3].Raw), pm.kept) {
				t.Errorf("the request after the restart lacks %s", pm.kept)
			}
			for _, m := range r.slack.ThreadMessages(channel, thread) {
				if strings.Contains(text(m), "careful answer") || strings.Contains(text(m), "sig-") {
					t.Errorf("reasoning state reached Slack: %q", text(m))
				}
			}
			for _, s := range r.slack.Streams() {
				if strings.Contains(s.Text, "careful answer") {
					t.Errorf("reasoning reached a stream: %q", s.Text)
				}
			}
		})
	}
}

// A replica that dies after the model's tool calls leaves their reasoning
// state in the shared store: the replica that takes the turn over sends it
// back, and the provider accepts its request.
func TestReplicaTakeoverKeepsReasoning(t *testing.T) {
	for _, pm := range slackModes {
		if pm.kept == "" {
			continue
		}
		t.Run(pm.name, func(t *testing.T) {
			c := newCluster(t)
			c.model.SetProvider(pm.provider)
			c.engine = func(cfg *engine.Config) { cfg.Model = modelFor(c.model, pm.model, pm.azure) }
			var n atomic.Int32
			c.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
				switch n.Add(1) {
				case 1:
					return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
						{Name: "read_file", Arguments: `{"path":"/outputs/a.md"}`},
						{Name: "read_file", Arguments: `{"path":"/outputs/b.md"}`},
					}}
				case 2:
					return fakemodel.Reply{Text: "LATE ANSWER", Delay: time.Minute} // ends when A's client gives up
				}
				return fakemodel.Reply{Text: "FINAL ANSWER"}
			})
			a, _ := c.start("replica-a", 50*time.Millisecond), c.start("replica-b", 5*time.Second)
			thread, _ := c.mention(a.conn, "draft the brief", "")
			c.waitFor("A's second model call", func() bool { return c.model.Calls() == 2 })
			a.kill(t)
			c.waitFor("B's answer", func() bool { return c.count(thread, "FINAL ANSWER") > 0 })
			reqs := c.model.Requests()
			last := reqs[len(reqs)-1]
			if !strings.Contains(string(last.Raw), pm.kept) {
				t.Errorf("B's request lacks %s", pm.kept)
			}
			if c.count(thread, "LATE ANSWER") != 0 {
				t.Error("the dead replica's answer was posted")
			}
		})
	}
}
