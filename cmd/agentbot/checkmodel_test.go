package main

import (
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
)

// check on a model that needs the Responses API for tools: auto's switch
// is reported, and so is the reasoning state the model returned.
func TestCheckResponsesModel(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["AGENTBOT_MODEL"] = "gpt-5.6-terra"
	s.vars["AGENTBOT_REASONING_EFFORT"] = "low"
	s.model.SetModels("gpt-5.6-terra")
	code, out := s.check(t)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	line(t, out, "✓ model API: Responses API: the provider refused Chat Completions for this model, so auto switched (set AGENTBOT_API=responses")
	line(t, out, `✓ model tool calls: called probe_echo with {"word":"ok"}`)
	l := line(t, out, "✓ model reasoning: effort low; 128 reasoning tokens; 2 encrypted reasoning item(s)")
	if !strings.Contains(l, "kept in the transcript") {
		t.Errorf("reasoning line %q", l)
	}
	reqs := s.model.Requests()
	if len(reqs) != 3 || fakemodel.IsResponses(reqs[0]) || !fakemodel.IsResponses(reqs[1]) || !fakemodel.IsResponses(reqs[2]) {
		t.Errorf("requests: %d", len(reqs))
	}
}

// check --no-slack checks everything but Slack: no tokens needed, no Slack
// call made.
func TestCheckNoSlack(t *testing.T) {
	s := newCheckSetup(t)
	delete(s.vars, "SLACK_BOT_TOKEN")
	delete(s.vars, "SLACK_APP_TOKEN")
	code, out := s.check(t, "--no-slack")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	line(t, out, "- Slack: skipped: --no-slack")
	line(t, out, "✓ model tool calls")
	if strings.Contains(out, "SLACK_") || len(s.slack.CallsTo("auth.test")) != 0 {
		t.Errorf("Slack was checked:\n%s", out)
	}
}

// A model that answers in text instead of calling the tool, and reports no
// usage, is a warning with hints, not a failure.
func TestCheckModelWithoutToolsOrUsage(t *testing.T) {
	s := newCheckSetup(t)
	s.model.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok", NoUsage: true} })
	code, out := s.check(t)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	line(t, out, "! model tool calls: the model answered in text instead of calling the tool")
	line(t, out, "! model usage: the provider reported no token usage")
	if !strings.Contains(out, "--enable-auto-tool-choice") || !strings.Contains(out, "--jinja") {
		t.Errorf("no server hints:\n%s", out)
	}
}

// With azure, check reports the api-version: the GA default when none is
// set (the fake's chat answers on the deployment path), a failure for one
// that refuses stream_options.
func TestCheckAzureAPIVersion(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["OPENAI_API_TYPE"] = "azure"
	s.vars["OPENAI_BASE_URL"] = s.model.RootURL()
	code, out := s.check(t)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	line(t, out, "✓ Azure api-version: not set; using 2024-10-21 (GA, takes stream_options)")
	for _, r := range s.model.Requests() {
		if r.Deployment == "check-model" && r.Query != "api-version=2024-10-21" {
			t.Errorf("query %q", r.Query)
		}
	}

	s.vars["OPENAI_API_VERSION"] = "2023-05-15"
	code, out = s.check(t)
	if code != 1 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	line(t, out, "✗ Azure api-version: 2023-05-15 is older than 2024-09-01 and refuses stream_options")
}
