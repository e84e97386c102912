package main

import (
	"fmt"
	"strings"
)

// quickstartHint points at where the README explains the tokens.
const quickstartHint = "see README.md, section 'Quickstart'"

// slackToken is one of the two Slack tokens agentbot needs.
type slackToken struct {
	env, prefix, what string
	value             func(*Config) string
}

// slackTokens are the Slack tokens, app-level first: the one place their
// format is known.
var slackTokens = []slackToken{
	{"SLACK_APP_TOKEN", "xapp-", "an app-level token with the connections:write scope, from 'Basic Information'",
		func(c *Config) string { return c.SlackAppToken }},
	{"SLACK_BOT_TOKEN", "xoxb-", "the Bot User OAuth Token from your Slack app's 'OAuth & Permissions' page",
		func(c *Config) string { return c.SlackBotToken }},
}

// problem says what is wrong with the token's value: "missing",
// "malformed", or "" when it looks right.
func (t slackToken) problem(cfg *Config) string {
	v := t.value(cfg)
	switch {
	case v == "":
		return "missing"
	case !strings.HasPrefix(v, t.prefix) || len(v) == len(t.prefix):
		return "malformed"
	}
	return ""
}

// checkTokens says which Slack token is missing or malformed, with where
// the README explains how to get it; serve refuses to start on it.
func checkTokens(cfg *Config) error {
	for _, t := range slackTokens {
		if p := t.problem(cfg); p != "" {
			return fmt.Errorf("%s is %s: set it to %s (it starts with %s); %s", t.env, p, t.what, t.prefix, quickstartHint)
		}
	}
	return nil
}
