// Package slackcheck probes the Slack side of a configuration without
// serving, for agentbot check: the bot token and the app-level token.
package slackcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slack-go/slack"
)

// Probe probes the Slack side of a configuration without serving, for
// agentbot check: the bot token with auth.test, the app-level token with
// apps.connections.open. Each probe is bounded by Timeout.
type Probe struct {
	BotToken, AppToken string
	// APIURL is Slack's Web API base URL ("": Slack's own).
	APIURL  string
	Timeout time.Duration
}

// Identity is what auth.test says of the bot token: its workspace and
// bot user.
type Identity struct {
	Team, TeamID, User, UserID string
}

// Auth calls auth.test with the bot token. Its error says whether Slack
// refused the token, did not answer in time, or could not be reached.
func (c Probe) Auth(ctx context.Context) (Identity, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	res, err := slack.New(c.BotToken, c.options()...).AuthTestContext(ctx)
	if err != nil {
		return Identity{}, c.explain(ctx, err)
	}
	return Identity{Team: res.Team, TeamID: res.TeamID, User: res.User, UserID: res.UserID}, nil
}

// SocketMode calls apps.connections.open with the app-level token, which
// succeeds only when the token is valid and Socket Mode is on. The
// websocket URL it returns is not dialled.
func (c Probe) SocketMode(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	api := slack.New(c.BotToken, c.options(slack.OptionAppLevelToken(c.AppToken))...)
	if _, _, err := api.StartSocketModeContext(ctx); err != nil {
		return fmt.Errorf("apps.connections.open: %w", c.explain(ctx, err))
	}
	return nil
}

// options are the slack-go options of a probe's client.
func (c Probe) options(extra ...slack.Option) []slack.Option {
	if c.APIURL != "" {
		extra = append(extra, slack.OptionAPIURL(c.APIURL))
	}
	return extra
}

// explain says what went wrong with a Slack call.
func (c Probe) explain(ctx context.Context, err error) error {
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("Slack refused it: %w", se)
	case ctx.Err() != nil:
		return fmt.Errorf("no answer from Slack within %s", c.Timeout)
	default:
		return fmt.Errorf("cannot reach Slack: %w", err)
	}
}
