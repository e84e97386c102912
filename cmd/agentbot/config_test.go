package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Secrets from the environment never show in usage text, yet they are used;
// a flag overrides the environment.
func TestSecretsStayOutOfUsage(t *testing.T) {
	vals := map[string]string{"SLACK_BOT_TOKEN": "xoxb-secret-bot", "SLACK_APP_TOKEN": "xapp-secret-app", "OPENAI_API_KEY": "sk-secret-key", "AGENTBOT_MODEL": "env-model"}
	getenv := func(k string) string { return vals[k] }
	for _, cmd := range []string{"serve", "chat", "agents", "sessions", "check"} {
		var out bytes.Buffer
		code := run(context.Background(), &env{args: []string{cmd, "-h"}, stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: getenv})
		if code != 0 {
			t.Errorf("%s -h exit %d", cmd, code)
		}
		for _, v := range vals {
			if strings.HasPrefix(v, "env-") {
				continue
			}
			if strings.Contains(out.String(), v) {
				t.Errorf("%s -h prints a secret:\n%s", cmd, out.String())
			}
		}
		if uses := cmd == "serve" || cmd == "check"; uses != strings.Contains(out.String(), "$SLACK_BOT_TOKEN") {
			t.Errorf("%s -h: lists the Slack token %v, want %v", cmd, !uses, uses)
		}
	}
	e := &env{args: nil, stderr: &bytes.Buffer{}, getenv: getenv}
	cfg, _, _ := parse("serve", e, nil)
	if cfg.SlackBotToken != "xoxb-secret-bot" || cfg.APIKey != "sk-secret-key" || cfg.Model != "env-model" {
		t.Fatalf("env values not used: %+v", cfg)
	}
	e.args = []string{"--api-key", "sk-flag", "--model", "flag-model", "--bundles", "a", "--bundles", "b,c"}
	cfg, _, _ = parse("serve", e, nil)
	if cfg.APIKey != "sk-flag" || cfg.Model != "flag-model" || strings.Join(cfg.Bundles, "|") != "a|b|c" {
		t.Fatalf("flags do not override: %+v", cfg)
	}
}

// AGENTBOT_LOG_FORMAT=json logs JSON lines; the default is text.
func TestLogFormat(t *testing.T) {
	var buf bytes.Buffer
	newLogger(&Config{LogFormat: "json", LogLevel: "info"}, &buf).Info("turn", "agent", "pm")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line["msg"] != "turn" || line["agent"] != "pm" {
		t.Fatalf("json log line %q: %v", buf.String(), err)
	}
	buf.Reset()
	newLogger(&Config{LogFormat: "text", LogLevel: "warn"}, &buf).Info("hidden")
	newLogger(&Config{LogFormat: "", LogLevel: ""}, &buf).Info("turn", "agent", "pm")
	if got := buf.String(); strings.Contains(got, "hidden") || !strings.Contains(got, "msg=turn agent=pm") {
		t.Fatalf("text log = %q", got)
	}
}
