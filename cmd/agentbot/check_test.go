package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage/bolt"
)

// checkAPIKey is the model key of the check tests; it must never be printed.
const checkAPIKey = "sk-check-secret-0123456789"

// checkAgent is a minimal agent file in the bundles' XML format.
const checkAgent = "# Tester\n\n```xml\n" + `<agent id="tester" name="Tess" title="Tester" icon="T">
  <persona><role>Checks things</role></persona>
  <cmds><c cmd="*help">Show the menu</c></cmds>
</agent>
` + "```\n"

// checkSetup is a configuration whose every check passes, against a fake
// Slack and a fake model endpoint.
type checkSetup struct {
	slack *fakeslack.Server
	model *fakemodel.Server
	vars  map[string]string
}

func newCheckSetup(t *testing.T) *checkSetup {
	t.Helper()
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	fm.RequireKey(checkAPIKey)
	fm.SetModels("other-model", "check-model")
	fm.Handle(probeAnswers)
	return &checkSetup{slack: fs, model: fm, vars: map[string]string{
		"SLACK_BOT_TOKEN":  fs.BotToken(),
		"SLACK_APP_TOKEN":  fs.AppToken(),
		"SLACK_API_URL":    fs.APIURL(),
		"OPENAI_BASE_URL":  fm.URL(),
		"OPENAI_API_KEY":   checkAPIKey,
		"AGENTBOT_MODEL":   "check-model",
		"AGENTBOT_BUNDLES": writeCheckBundle(t, "type: standalone\nname: tester\nagent:\n  id: tester\n  name: Tess\n  file: agent.md\n"),
		"AGENTBOT_DATA":    filepath.Join(t.TempDir(), "data"),
	}}
}

// probeAnswers answers check's model probe as a good model does: the tool
// call it asks for, and a streamed text answer.
func probeAnswers(r fakemodel.Request) fakemodel.Reply {
	if len(r.Tools) > 0 {
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: r.Tools[0].Function.Name, Arguments: `{"word":"ok"}`}}}
	}
	return fakemodel.Reply{Text: "one two three four five", Chunks: 5}
}

// writeCheckBundle writes a bundle with the given bundle.yaml and returns
// the folder holding it.
func writeCheckBundle(t *testing.T, bundleYAML string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "tester")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"bundle.yaml": bundleYAML,
		"config.yaml": "user_name: there\noutput_folder: \"{project-root}/outputs\"\n",
		"agent.md":    checkAgent,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// check runs "agentbot check" in-process and returns the exit code and
// everything printed. It fails the test when a secret was printed.
func (s *checkSetup) check(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out strings.Builder // config.go has a func named bytes
	code := run(context.Background(), &env{
		args:   append([]string{"check", "--check-timeout", "5s"}, args...),
		stdin:  strings.NewReader(""),
		stdout: &out,
		stderr: &out,
		getenv: func(k string) string { return s.vars[k] },
	})
	text := out.String()
	t.Logf("agentbot check (exit %d):\n%s", code, text)
	for _, secret := range []string{s.vars["SLACK_BOT_TOKEN"], s.vars["SLACK_APP_TOKEN"], s.vars["OPENAI_API_KEY"]} {
		if len(secret) > len("xoxb-") && strings.Contains(text, secret) {
			t.Errorf("output shows the secret %q:\n%s", secret, text)
		}
	}
	return code, text
}

// line returns the output line starting with prefix, or fails the test.
func line(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, out)
	return ""
}

func TestCheckAllGood(t *testing.T) {
	s := newCheckSetup(t)
	code, out := s.check(t)
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, out)
	}
	for _, want := range []string{
		"✓ SLACK_BOT_TOKEN: xoxb-…(redacted)",
		"✓ SLACK_APP_TOKEN: xapp-…(redacted)",
		`✓ Slack auth.test: team "` + fakeslack.DefaultTeamName + `" (` + fakeslack.DefaultTeamID + "), bot user @" + fakeslack.DefaultBotName,
		"✓ Slack Socket Mode: ",
		"✓ model endpoint " + s.model.URL() + ": 2 model(s) listed",
		"✓ model check-model: listed",
		"✓ model API: Chat Completions (auto",
		`✓ model tool calls: called probe_echo with {"word":"ok"}`,
		`✓ model streaming: 5 text deltas, "one two three four five"`,
		"✓ model usage: prompt ",
		"✓ model reasoning: effort: the model's default; 0 reasoning tokens",
		"✓ model context: a request of about 60",
		"✓ agents: 1 agent(s)",
		"✓ data dir " + s.vars["AGENTBOT_DATA"] + ": opened and closed",
		"agentbot check: all 15 ok, 0 warning(s)",
	} {
		line(t, out, want)
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "✓ ") && !strings.HasPrefix(l, "agentbot check:") {
			t.Errorf("unexpected line %q in:\n%s", l, out)
		}
	}
	if !strings.Contains(line(t, out, "✓ agents:"), "entry points: tester") {
		t.Errorf("agents line lacks the entry points:\n%s", out)
	}
	if n := len(s.slack.CallsTo("apps.connections.open")); n != 1 {
		t.Errorf("apps.connections.open called %d times, want 1", n)
	}
	if n := s.slack.TotalConnections(); n != 0 {
		t.Errorf("check dialled the Socket Mode websocket (%d connections)", n)
	}
	if n := s.model.Calls(); n != 3 {
		t.Errorf("check made %d model calls, want the 3 of its probe (one tool call, one streamed text, one long prompt)", n)
	}
}

func TestCheckBadBotToken(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["SLACK_BOT_TOKEN"] = "xoxb-not-the-right-token-42"
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ Slack auth.test:")
	if !strings.Contains(l, "SLACK_BOT_TOKEN") || !strings.Contains(l, "invalid_auth") {
		t.Errorf("auth.test line %q does not name SLACK_BOT_TOKEN and invalid_auth", l)
	}
	line(t, out, "✓ SLACK_BOT_TOKEN: xoxb-…(redacted)") // well-formed, just wrong
	line(t, out, "✓ Slack Socket Mode:")
	line(t, out, "agentbot check: 1 failed")
}

func TestCheckBotTokenMalformed(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["SLACK_BOT_TOKEN"] = "xoxp-user-token-instead-123"
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ SLACK_BOT_TOKEN: malformed")
	if !strings.Contains(l, "xoxp-…(redacted)") || !strings.Contains(l, `"xoxb-"`) {
		t.Errorf("line %q should show the token's kind and the wanted prefix", l)
	}
	line(t, out, "- Slack auth.test: skipped")
	if strings.Contains(out, "user-token-instead") {
		t.Errorf("output shows part of the token:\n%s", out)
	}
	if n := len(s.slack.CallsTo("auth.test")); n != 0 {
		t.Errorf("auth.test called with a malformed token (%d calls)", n)
	}
}

func TestCheckAppToken(t *testing.T) {
	for _, c := range []struct {
		name, token, want string
	}{
		{"missing", "", "✗ SLACK_APP_TOKEN: missing"},
		{"bot token in its place", fakeslack.DefaultBotToken, "✗ SLACK_APP_TOKEN: malformed: xoxb-…(redacted)"},
		{"garbage", "not a token at all", "✗ SLACK_APP_TOKEN: malformed: (redacted)"},
		{"prefix only", "xapp-", "✗ SLACK_APP_TOKEN: malformed"},
		{"the README's placeholder", "xapp-…", "✗ SLACK_APP_TOKEN: a placeholder copied from an example, not a real token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newCheckSetup(t)
			s.vars["SLACK_APP_TOKEN"] = c.token
			code, out := s.check(t)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			line(t, out, c.want)
			if !strings.Contains(out, "see docs/slack.md, section 'Setting up the Slack app'") {
				t.Errorf("no pointer to the Slack setup:\n%s", out)
			}
			line(t, out, "- Slack Socket Mode: skipped")
			line(t, out, "✓ Slack auth.test:")
			if strings.Contains(out, "(redacted)(redacted)") {
				t.Errorf("a value redacted twice:\n%s", out)
			}
			if c.token == "not a token at all" && strings.Contains(out, c.token) {
				t.Errorf("output shows the token:\n%s", out)
			}
		})
	}
}

func TestCheckWrongAppToken(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["SLACK_APP_TOKEN"] = "xapp-1-A000-revoked-token"
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ Slack Socket Mode:")
	if !strings.Contains(l, "SLACK_APP_TOKEN") || !strings.Contains(l, "invalid_auth") {
		t.Errorf("Socket Mode line %q does not name SLACK_APP_TOKEN and invalid_auth", l)
	}
	if !strings.Contains(out, "hint: Slack does not accept SLACK_APP_TOKEN") || !strings.Contains(out, "generate a new app-level token") {
		t.Errorf("no hint about a new app-level token:\n%s", out)
	}
}

func TestCheckUnreachableModel(t *testing.T) {
	s := newCheckSetup(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/v1"
	dead.Close()
	s.vars["OPENAI_BASE_URL"] = deadURL
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ model endpoint "+deadURL+": unreachable")
	if !strings.Contains(out, "check OPENAI_BASE_URL") {
		t.Errorf("no hint about OPENAI_BASE_URL after %q:\n%s", l, out)
	}
	line(t, out, "✓ agents:") // later checks still run
}

func TestCheckModelTimeout(t *testing.T) {
	s := newCheckSetup(t)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer hang.Close()
	s.vars["OPENAI_BASE_URL"] = hang.URL + "/v1"
	code, out := s.check(t, "--check-timeout", "300ms")
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	line(t, out, "✗ model endpoint "+hang.URL+"/v1: unreachable: no answer within 300ms")
}

func TestCheckWrongAPIKey(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["OPENAI_API_KEY"] = "sk-wrong-key-9876543210"
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ model endpoint")
	if !strings.Contains(l, "HTTP 401") {
		t.Errorf("model line %q does not say HTTP 401", l)
	}
	if !strings.Contains(out, "check OPENAI_API_KEY") {
		t.Errorf("no hint about OPENAI_API_KEY:\n%s", out)
	}
}

func TestCheckModelNotListedWarns(t *testing.T) {
	s := newCheckSetup(t)
	s.model.SetModels("gpt-a", "gpt-b")
	code, out := s.check(t)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (a warning only):\n%s", code, out)
	}
	line(t, out, "! model check-model: not in the endpoint's models list")
	if !strings.Contains(out, "gpt-a, gpt-b") {
		t.Errorf("warning does not list the endpoint's models:\n%s", out)
	}
	line(t, out, "agentbot check: all 14 ok, 1 warning(s)")
}

// noModelsList is a proxy to fm that answers status to GET .../models, as
// providers without a models list do.
func noModelsList(t *testing.T, fm *fakemodel.Server, status int) string {
	t.Helper()
	target, err := url.Parse(fm.RootURL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			http.Error(w, "no models here", status)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func TestCheckModelWithoutListProbesTheModel(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusMethodNotAllowed} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			s := newCheckSetup(t)
			s.vars["OPENAI_BASE_URL"] = noModelsList(t, s.model, status)
			code, out := s.check(t)
			if code != 0 {
				t.Fatalf("exit %d, want 0:\n%s", code, out)
			}
			l := line(t, out, "✓ model endpoint")
			if !strings.Contains(l, fmt.Sprintf("no models list (HTTP %d)", status)) {
				t.Errorf("model line %q does not say there is no list", l)
			}
			line(t, out, "✓ model tool calls: called probe_echo")
			reqs := s.model.Requests()
			if len(reqs) != 3 || reqs[0].Model != "check-model" || len(reqs[0].Tools) != 1 || len(reqs[1].Tools) != 0 || len(reqs[2].Raw) < 20000 {
				t.Fatalf("%d model calls, want the tool probe, the text probe and the context probe of check-model", len(reqs))
			}
		})
	}
}

func TestCheckModelWithoutListAndFailingProbe(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["OPENAI_BASE_URL"] = noModelsList(t, s.model, http.StatusNotFound)
	s.model.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Status: http.StatusNotFound} })
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ model tool calls")
	if !strings.Contains(l, "a request with one tool failed: HTTP 404") {
		t.Errorf("model line %q does not say the probe failed", l)
	}
	if !strings.Contains(out, "check AGENTBOT_MODEL") {
		t.Errorf("no hint about AGENTBOT_MODEL:\n%s", out)
	}
}

func TestCheckBadAPIType(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["OPENAI_API_TYPE"] = "anthropic"
	code, out := s.check(t)
	if code != 2 || !strings.Contains(out, `$OPENAI_API_TYPE="anthropic": want one of openai, azure, azure_ad`) {
		t.Fatalf("exit %d, want 2 naming the setting:\n%s", code, out)
	}
}

func TestCheckBrokenBundle(t *testing.T) {
	s := newCheckSetup(t)
	broken := writeCheckBundle(t, "type: [bundle\nagents: {{{\n")
	s.vars["AGENTBOT_BUNDLES"] = "" // the flag alone names the bundles
	code, out := s.check(t, "--bundles", broken)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	line(t, out, "✗ agents: no agent found in --bundles "+broken)
	problem := filepath.Join(broken, "tester", "bundle.yaml") + ": "
	if !strings.Contains(out, "\n    "+problem) {
		t.Errorf("the problem %q is not listed:\n%s", problem, out)
	}
}

func TestCheckBrokenBundleBesideGoodOne(t *testing.T) {
	s := newCheckSetup(t)
	broken := writeCheckBundle(t, "type: bundle\nagents:\n  - id: ghost\n    file: agents/missing.md\n    entry_point: true\n")
	code, out := s.check(t, "--bundles", s.vars["AGENTBOT_BUNDLES"], "--bundles", broken)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ agents: 1 agent(s)")
	if !strings.Contains(l, "1 problem(s)") {
		t.Errorf("agents line %q does not count the problem", l)
	}
	if !strings.Contains(out, "missing.md") {
		t.Errorf("the missing agent file is not listed:\n%s", out)
	}
}

func TestCheckNoAgents(t *testing.T) {
	s := newCheckSetup(t)
	s.vars["AGENTBOT_BUNDLES"] = t.TempDir()
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	line(t, out, "✗ agents: no agent found in --bundles "+s.vars["AGENTBOT_BUNDLES"])
}

func TestCheckDataDirLocked(t *testing.T) {
	s := newCheckSetup(t)
	st, err := bolt.Open(s.vars["AGENTBOT_DATA"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	l := line(t, out, "✗ data dir "+s.vars["AGENTBOT_DATA"])
	if !strings.Contains(l, "in use by another agentbot process") {
		t.Errorf("data dir line %q does not say the database is held", l)
	}
}

func TestCheckDataDirNotWritable(t *testing.T) {
	s := newCheckSetup(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.vars["AGENTBOT_DATA"] = filepath.Join(file, "data") // under a regular file
	code, out := s.check(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	line(t, out, "✗ data dir "+s.vars["AGENTBOT_DATA"])
	if !strings.Contains(out, "set AGENTBOT_DATA") {
		t.Errorf("no hint about AGENTBOT_DATA:\n%s", out)
	}
}

func TestCheckBadFlag(t *testing.T) {
	s := newCheckSetup(t)
	for _, bad := range []string{"soon", "0s", "-1s"} {
		if code, out := s.check(t, "--check-timeout", bad); code != 2 || !strings.Contains(out, "check-timeout") {
			t.Errorf("--check-timeout %s: exit %d, want 2 and a message naming the flag:\n%s", bad, code, out)
		}
	}
}
