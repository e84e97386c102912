package slackcheck

import (
	"errors"
	"strings"

	"github.com/slack-go/slack"
)

// SetupDoc points at where the documentation explains the Slack app and
// its two tokens.
const SetupDoc = "see docs/slack.md, section 'Setting up the Slack app'"

// Refusal is the error code with which Slack refused a call (its
// {"ok":false,"error":CODE} answer), when that is a refusal that trying
// again does not cure: a token of the wrong type, revoked or wrong, a
// missing scope. Slack's own transient failures (internal_error,
// fatal_error, service_unavailable, request_timeout), rate limits, HTTP
// errors and unreachable networks are no refusal: ok is false.
func Refusal(err error) (code string, ok bool) {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return "", false
	}
	switch se.Err {
	case "", "internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited":
		return "", false
	}
	return se.Err, true
}

// SocketModeHint says how to fix a refusal of apps.connections.open (its
// Slack error code, as err's text or a slack.SlackErrorResponse): agentbot
// check and serve give the same hint.
func SocketModeHint(err error) string {
	code := ""
	if err != nil {
		code = strings.TrimSpace(err.Error())
		if c, ok := Refusal(err); ok {
			code = c
		}
	}
	var hint string
	switch code {
	case "not_allowed_token_type":
		hint = "SLACK_APP_TOKEN is not an app-level token: Socket Mode needs one (xapp-…) with the connections:write scope, made under Basic Information → App-Level Tokens (a bot or user token cannot open a connection)"
	case "missing_scope":
		hint = "SLACK_APP_TOKEN lacks the connections:write scope: generate an app-level token with it under Basic Information → App-Level Tokens"
	case "invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive":
		hint = "Slack does not accept SLACK_APP_TOKEN (wrong, revoked, or of another app): generate a new app-level token with connections:write under Basic Information → App-Level Tokens"
	default:
		hint = "check SLACK_APP_TOKEN (an app-level token with connections:write) and turn on Socket Mode in the app's settings"
	}
	return hint + "; " + SetupDoc
}

// BotTokenHint says how to fix a bot token auth.test refused.
const BotTokenHint = "check SLACK_BOT_TOKEN: copy the Bot User OAuth Token (xoxb-) of the app installed in your workspace; " + SetupDoc
