package slackcheck_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/bot/slackcheck"
)

// The Slack probe of agentbot check, against the fake Slack: right tokens
// name the workspace and bot user; a wrong token, a wrong app token and an
// unreachable Slack each say which.
func TestSlackCheck(t *testing.T) {
	fs := fakeslack.New(t)
	ok := slackcheck.Probe{BotToken: fakeslack.DefaultBotToken, AppToken: fakeslack.DefaultAppToken, APIURL: fs.APIURL(), Timeout: 5 * time.Second}
	id, err := ok.Auth(context.Background())
	if err != nil || id.TeamID != fs.TeamID() || id.UserID != fs.BotUserID() {
		t.Fatalf("Auth = %+v, %v; want team %s, user %s", id, err, fs.TeamID(), fs.BotUserID())
	}
	if err := ok.SocketMode(context.Background()); err != nil {
		t.Fatalf("SocketMode: %v", err)
	}

	wrong := ok
	wrong.BotToken, wrong.AppToken = "xoxb-not-the-right-token-42", "xapp-1-A000-revoked-token"
	if _, err := wrong.Auth(context.Background()); err == nil || !strings.Contains(err.Error(), "Slack refused it: invalid_auth") {
		t.Fatalf("Auth with a wrong token: %v", err)
	}
	if err := wrong.SocketMode(context.Background()); err == nil || !strings.Contains(err.Error(), "apps.connections.open: Slack refused it: invalid_auth") {
		t.Fatalf("SocketMode with a wrong app token: %v", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ok
	gone.APIURL = "http://" + l.Addr().String() + "/api/"
	l.Close() // nothing listens there now
	if _, err := gone.Auth(context.Background()); err == nil || !strings.Contains(err.Error(), "cannot reach Slack") {
		t.Fatalf("Auth with Slack unreachable: %v", err)
	}
}
