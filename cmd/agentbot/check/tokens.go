package check

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"agentbot/bot/slackcheck"
)

// Where the documentation explains what a hint asks for: the Slack app and
// its tokens (slackcheck.SetupDoc, which serve's Socket Mode hints share),
// the model settings, the agents' sources.
const (
	slackDoc  = slackcheck.SetupDoc
	modelDoc  = "see docs/configuration.md, section 'Model providers'"
	httpDoc   = "see docs/slack.md, section 'HTTP mode: the Events API at a request URL'"
	agentsDoc = "see docs/bmad.md"
)

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

// Problems of a secret's value (see slackToken.problem and needKey).
const (
	problemMissing     = "missing"
	problemPlaceholder = "a placeholder"
	problemMalformed   = "malformed"
)

// problem says what is wrong with the token's value: problemMissing,
// problemPlaceholder, problemMalformed, or "" when it looks right.
func (t slackToken) problem(cfg *Config) string {
	v := t.value(cfg)
	switch {
	case v == "":
		return problemMissing
	case isPlaceholder(v):
		return problemPlaceholder
	case !strings.HasPrefix(v, t.prefix) || len(v) == len(t.prefix):
		return problemMalformed
	}
	return ""
}

// placeholder matches a value copied from an example instead of a real
// secret: an ellipsis ("xoxb-…", "sk-..."), brackets ("<your token>"), or
// a telling word right after the prefix ("xoxb-your-token", "sk-changeme",
// "xapp-xxxx"). Real Slack tokens and API keys have none of these.
var placeholder = regexp.MustCompile(`…|\.\.\.|[<>{}\[\]]|^(?i:(?:xapp|xoxb|sk)-(?:proj-)?)?(?i:your|paste|replace|changeme|example|placeholder|token|x{3,})(?:[-_.]|$)`)

// isPlaceholder reports whether v looks like a placeholder (see
// placeholder).
func isPlaceholder(v string) bool { return placeholder.MatchString(strings.TrimSpace(v)) }

// isExample reports whether v is one of the documentation's examples
// themselves, a prefix and an ellipsis ("xoxb-…", "sk-…").
func isExample(v string) bool {
	prefix, ok := strings.CutSuffix(v, "…")
	return ok && (prefix == "sk-" || slices.ContainsFunc(slackTokens, func(t slackToken) bool { return t.prefix == prefix }))
}

// placeholderHint is what a placeholder's message adds: where it came
// from. The value itself is never shown (it may be a real secret after all).
func placeholderHint(prefix string) string {
	return "copied from an example, such as " + prefix + "…"
}

// Tokens says which Slack tokens are missing, placeholders or malformed,
// each with where the docs explain how to get it, one error per token
// (errors.Join); serve refuses to start on it.
func Tokens(cfg *Config) error {
	errs := []error{installsProblem(cfg)}
	if HTTPMode(cfg) {
		errs = append(errs, SlackMode(cfg))
	}
	for _, t := range slackTokens {
		if t.env == "SLACK_APP_TOKEN" && HTTPMode(cfg) {
			continue // HTTP mode has no Socket Mode connection
		}
		if t.env == "SLACK_BOT_TOKEN" && cfg.SlackClientID != "" {
			continue // each installation brings its own
		}
		switch p := t.problem(cfg); p {
		case "":
		case problemPlaceholder:
			errs = append(errs, fmt.Errorf("%s is %s (%s): set it to %s (it starts with %s); %s", t.env, p, placeholderHint(t.prefix), t.what, t.prefix, slackDoc))
		default:
			errs = append(errs, fmt.Errorf("%s is %s: set it to %s (it starts with %s); %s", t.env, p, t.what, t.prefix, slackDoc))
		}
	}
	return errors.Join(errs...)
}

// HTTPMode reports whether Slack's requests come over HTTP
// (AGENTBOT_SLACK_MODE=http) rather than Socket Mode.
func HTTPMode(cfg *Config) bool { return strings.EqualFold(strings.TrimSpace(cfg.SlackMode), "http") }

// RequestURL is HTTP mode's request URL: /slack/events under the public URL.
func RequestURL(cfg *Config) string { return strings.TrimSuffix(cfg.PublicURL, "/") + "/slack/events" }

// SlackMode reports what HTTP mode lacks: the signing secret (set, and
// not a placeholder) and the public URL Slack's requests are sent to.
func SlackMode(cfg *Config) error {
	var errs []error
	switch v := strings.TrimSpace(cfg.SigningSecret); {
	case v == "":
		errs = append(errs, fmt.Errorf("SLACK_SIGNING_SECRET is %s: AGENTBOT_SLACK_MODE=http needs it, the Signing Secret from your Slack app's 'Basic Information' page; %s", problemMissing, httpDoc))
	case isPlaceholder(v):
		errs = append(errs, fmt.Errorf("SLACK_SIGNING_SECRET is %s: set it to the Signing Secret from your Slack app's 'Basic Information' page; %s", problemPlaceholder, httpDoc))
	}
	if strings.TrimSpace(cfg.PublicURL) == "" {
		errs = append(errs, errors.New("AGENTBOT_PUBLIC_URL is missing: AGENTBOT_SLACK_MODE=http needs it, Slack sends its requests to AGENTBOT_PUBLIC_URL/slack/events (served on AGENTBOT_LISTEN); "+httpDoc))
	}
	return errors.Join(errs...)
}

// installsProblem is the error of the settings of a distributed app
// (SLACK_CLIENT_ID): its secret is needed, and a SLACK_BOT_TOKEN beside it
// would leave which token answers a workspace unclear.
func installsProblem(cfg *Config) error {
	switch {
	case cfg.SlackClientID == "" && cfg.SlackClientSecret != "":
		return fmt.Errorf("SLACK_CLIENT_SECRET is set without SLACK_CLIENT_ID: set both (from 'Basic Information') to install into other workspaces, or neither; %s", slackDoc)
	case cfg.SlackClientID == "":
		return nil
	case strings.TrimSpace(cfg.SlackClientSecret) == "" || isPlaceholder(cfg.SlackClientSecret):
		return fmt.Errorf("SLACK_CLIENT_SECRET is %s: set it to the Client Secret from 'Basic Information'; %s", problemMissing, slackDoc)
	case cfg.SlackBotToken != "":
		return fmt.Errorf("SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set: with SLACK_CLIENT_ID each workspace is answered with its installation's token (/slack/install); unset SLACK_BOT_TOKEN, or unset SLACK_CLIENT_ID for a single workspace; %s", slackDoc)
	}
	return nil
}

// APIKey reports the error of a model endpoint that needs an API key and
// has none: OpenAI itself and Azure do; a custom OPENAI_BASE_URL (Ollama,
// vLLM) may run without one. A placeholder ("sk-…") is an error for every
// endpoint. serve, chat and check apply this one rule.
func APIKey(c *Config) error {
	if k := strings.TrimSpace(c.APIKey); k != "" {
		if isPlaceholder(k) {
			return fmt.Errorf("OPENAI_API_KEY is %s (%s): set it to your model provider's API key, or leave it empty for a local endpoint that needs none; %s", problemPlaceholder, placeholderHint("sk-"), modelDoc)
		}
		return nil
	}
	if strings.TrimSpace(c.BaseURL) == "" || strings.HasPrefix(strings.ToLower(c.APIType), "azure") {
		return fmt.Errorf("OPENAI_API_KEY is %s: set it (or --api-key) to your %s API key; %s", problemMissing,
			map[bool]string{true: "Azure OpenAI", false: "OpenAI"}[strings.HasPrefix(strings.ToLower(c.APIType), "azure")], modelDoc)
	}
	return nil
}
