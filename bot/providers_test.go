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
	"agentbot/storage"
)

// slackModes are the fake's provider modes as users set them up.
var slackModes = fakemodel.Setups

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
	ctx := context.Background()
	for _, pm := range slackModes {
		t.Run(pm.Name, func(t *testing.T) {
			fm := fakemodel.NewTB(t)
			fm.SetProvider(pm.Provider)
			fm.Enqueue(fakemodel.ScenarioReplies()...)
			r := newRig(t, rigOpts{engine: func(c *engine.Config) { c.Model = modelFor(fm, pm.Model, pm.Azure) }})
			if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
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
			if pm.Kept != "" && !strings.Contains(string(reqs[3].Raw), pm.Kept) {
				t.Errorf("the request after the restart lacks %s", pm.Kept)
			}
			for _, m := range r.slack.ThreadMessages(channel, thread) {
				if strings.Contains(text(m), fakemodel.ReasoningMarker) || strings.Contains(text(m), "sig-") {
					t.Errorf("reasoning state reached Slack: %q", text(m))
				}
			}
			for _, s := range r.slack.Streams() {
				if strings.Contains(s.Text, fakemodel.ReasoningMarker) {
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
		if pm.Kept == "" {
			continue
		}
		t.Run(pm.Name, func(t *testing.T) {
			c := newCluster(t)
			c.model.SetProvider(pm.Provider)
			c.engine = func(cfg *engine.Config) { cfg.Model = modelFor(c.model, pm.Model, pm.Azure) }
			var n atomic.Int32
			c.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
				switch n.Add(1) {
				case 1:
					return fakemodel.ScenarioReplies()[0]
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
			if !strings.Contains(string(last.Raw), pm.Kept) {
				t.Errorf("B's request lacks %s", pm.Kept)
			}
			if c.count(thread, "LATE ANSWER") != 0 {
				t.Error("the dead replica's answer was posted")
			}
		})
	}
}
