package fakeslack_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/fakeslack"
)

// TestOAuthV2 exchanges a code once, refreshes a rotating token (the old
// refresh token is revoked), refuses wrong clients, and keeps each
// installation's token to its own team's channels.
func TestOAuthV2(t *testing.T) {
	ctx := context.Background()
	s := fakeslack.New(t)
	api := slack.OAuthOptionAPIURL(s.APIURL())
	s.GrantCode("c1", "https://bot.example/slack/oauth_redirect", fakeslack.Install{Team: "TA", BotUserID: "UBA", Rotate: true, TTL: time.Hour})
	if _, err := slack.GetOAuthV2ResponseContext(ctx, http.DefaultClient, s.ClientID(), "wrong", "c1", "https://bot.example/slack/oauth_redirect", api); err == nil || !strings.Contains(err.Error(), "bad_client_secret") {
		t.Fatalf("wrong secret: %v", err)
	}
	r, err := slack.GetOAuthV2ResponseContext(ctx, http.DefaultClient, s.ClientID(), s.ClientSecret(), "c1", "https://bot.example/slack/oauth_redirect", api)
	if err != nil {
		t.Fatal(err)
	}
	if r.Team.ID != "TA" || r.BotUserID != "UBA" || r.RefreshToken == "" || r.ExpiresIn != 3600 || !strings.HasPrefix(r.AccessToken, "xoxe.xoxb-") {
		t.Fatalf("exchange = %+v", r)
	}
	if _, err := slack.GetOAuthV2ResponseContext(ctx, http.DefaultClient, s.ClientID(), s.ClientSecret(), "c1", "https://bot.example/slack/oauth_redirect", api); err == nil || !strings.Contains(err.Error(), "invalid_code") {
		t.Fatalf("code reused: %v", err)
	}
	n, err := slack.RefreshOAuthV2TokenContext(ctx, http.DefaultClient, s.ClientID(), s.ClientSecret(), r.RefreshToken, api)
	if err != nil {
		t.Fatal(err)
	}
	if n.AccessToken == r.AccessToken || n.RefreshToken == r.RefreshToken || n.RefreshToken == "" || s.Refreshes() != 1 {
		t.Fatalf("refresh = %+v", n)
	}
	if _, err := slack.RefreshOAuthV2TokenContext(ctx, http.DefaultClient, s.ClientID(), s.ClientSecret(), r.RefreshToken, api); err == nil || !strings.Contains(err.Error(), "invalid_refresh_token") {
		t.Fatalf("old refresh token: %v", err)
	}

	s.AddInstall(fakeslack.Install{Team: "TB", BotToken: "xoxb-team-b", BotUserID: "UBB"})
	s.AddInstall(fakeslack.Install{Enterprise: "E1", Org: true, BotToken: "xoxb-org-e1", BotUserID: "UBO"})
	s.SetChannelTeam("CA", "TA", "")
	s.SetChannelTeam("CB", "TB", "E1")
	post := func(tok, ch string) error {
		_, _, err := slack.New(tok, slack.OptionAPIURL(s.APIURL())).PostMessageContext(ctx, ch, slack.MsgOptionText("hi", false))
		return err
	}
	if err := post(n.AccessToken, "CA"); err != nil {
		t.Fatalf("TA's token in TA: %v", err)
	}
	if err := post("xoxb-team-b", "CA"); err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Fatalf("TB's token in TA's channel: %v", err)
	}
	if err := post("xoxb-org-e1", "CB"); err != nil {
		t.Fatalf("E1's org token in TB (of E1): %v", err)
	}
	if err := post("xoxb-org-e1", "CA"); err == nil {
		t.Fatal("E1's org token posted in TA, not of E1")
	}
	s.RevokeInstall("xoxb-team-b")
	if err := post("xoxb-team-b", "CB"); err == nil || !strings.Contains(err.Error(), "invalid_auth") {
		t.Fatalf("revoked token: %v", err)
	}

	s.AddInstall(fakeslack.Install{Team: "TC", BotToken: "xoxe.xoxb-short", Rotate: true, TTL: time.Millisecond})
	time.Sleep(5 * time.Millisecond)
	if err := post("xoxe.xoxb-short", ""); err == nil || !strings.Contains(err.Error(), "token_expired") {
		t.Fatalf("expired token: %v", err)
	}
}
