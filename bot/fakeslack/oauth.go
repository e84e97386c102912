package fakeslack

import (
	"strconv"
	"strings"
	"time"
)

// Installations and OAuth v2 (oauth.go): the fake answers oauth.v2.access
// as https://docs.slack.dev/reference/methods/oauth.v2.access documents
// it. A code granted by GrantCode is exchanged once for its installation
// (errors invalid_code, bad_redirect_uri, invalid_client_id,
// bad_client_secret); with token rotation
// (https://docs.slack.dev/authentication/using-token-rotation) the bot
// token expires (expires_in, 12 hours by default) and
// grant_type=refresh_token exchanges the refresh token for a new bot
// token and a new refresh token, the old refresh token being revoked
// (invalid_refresh_token when used again). Each installation's bot token
// is accepted beside the default one, for its own team (an org-wide
// install: every team of its enterprise) only: a call naming a channel
// that SetChannelTeam gave another team fails with channel_not_found, as
// Slack answers a token that cannot see the channel.

// Install is an installation of the fake app: a workspace's (Team), or
// an organization's (Org, Enterprise).
type Install struct {
	Team, TeamName, Enterprise string
	// Org: installed org-wide (is_enterprise_install).
	Org       bool
	BotToken  string
	BotUserID string
	Scopes    []string
	// Rotate turns token rotation on: RefreshToken is issued and BotToken
	// expires after TTL (0: 12 hours).
	Rotate       bool
	RefreshToken string
	TTL          time.Duration
	// InstalledBy is the authed user of the exchange.
	InstalledBy string

	expires time.Time
}

// oauthState is the fake's OAuth app and installations.
type oauthState struct {
	clientID, clientSecret string
	codes                  map[string]codeGrant
	tokens                 map[string]*Install // live bot token -> its install
	refresh                map[string]*Install // live refresh token -> its install
	teams                  map[string]string   // channel -> team (SetChannelTeam)
	teamEnt                map[string]string   // team -> enterprise (SetChannelTeam)
	refreshed              int
}

type codeGrant struct {
	in       Install
	redirect string
}

// WithOAuthClient sets the OAuth client id and secret oauth.v2.access
// accepts (default "fake-client-id" and "fake-client-secret").
func WithOAuthClient(id, secret string) Option {
	return func(c *config) { c.clientID, c.clientSecret = id, secret }
}

// ClientID is the OAuth client id oauth.v2.access accepts.
func (s *Server) ClientID() string { return s.cfg.clientID }

// ClientSecret is the OAuth client secret oauth.v2.access accepts.
func (s *Server) ClientSecret() string { return s.cfg.clientSecret }

func (s *Server) oauthLocked() *oauthState {
	if s.oauth == nil {
		s.oauth = &oauthState{clientID: s.cfg.clientID, clientSecret: s.cfg.clientSecret, codes: map[string]codeGrant{},
			tokens: map[string]*Install{}, refresh: map[string]*Install{}, teams: map[string]string{}, teamEnt: map[string]string{}}
	}
	return s.oauth
}

// GrantCode makes oauth.v2.access exchange code once, with redirect_uri
// redirect, for in: as if a person had approved the install in Slack.
func (s *Server) GrantCode(code, redirect string, in Install) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauthLocked().codes[code] = codeGrant{in: in, redirect: redirect}
}

// AddInstall makes in's bot token (and refresh token when in.Rotate)
// live, as an installation done earlier.
func (s *Server) AddInstall(in Install) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issueLocked(&in, time.Now())
}

// issueLocked makes in's tokens live, minting them when empty.
func (s *Server) issueLocked(in *Install, now time.Time) {
	o := s.oauthLocked()
	if in.BotToken == "" {
		in.BotToken = "xoxb-" + randomHex(8)
		if in.Rotate {
			in.BotToken = "xoxe.xoxb-1-" + randomHex(8)
		}
	}
	if in.Rotate {
		if in.RefreshToken == "" {
			in.RefreshToken = "xoxe-1-" + randomHex(8)
		}
		if in.TTL == 0 {
			in.TTL = 12 * time.Hour
		}
		in.expires = now.Add(in.TTL)
		o.refresh[in.RefreshToken] = in
	}
	o.tokens[in.BotToken] = in
}

// RevokeInstall makes the tokens of the install of bot token tok invalid,
// as an uninstall does.
func (s *Server) RevokeInstall(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.oauthLocked()
	if in := o.tokens[tok]; in != nil {
		delete(o.refresh, in.RefreshToken)
	}
	delete(o.tokens, tok)
}

// authRevoke answers auth.revoke: the installation's token (and its
// refresh token) stops working, as an uninstall's would.
func (s *Server) authRevoke(r *apiRequest) (result, string) {
	o := s.oauthLocked()
	if in := o.tokens[r.token]; in != nil {
		delete(o.refresh, in.RefreshToken)
	}
	delete(o.tokens, r.token)
	return result{"revoked": true}, ""
}

// SetChannelTeam says channel belongs to team (of enterprise, "" for
// none): an installation's token of another team, not installed org-wide
// over enterprise, gets channel_not_found there.
func (s *Server) SetChannelTeam(channel, team, enterprise string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.oauthLocked()
	o.teams[channel] = team
	o.teamEnt[team] = enterprise
}

// Refreshes is how many refresh_token grants oauth.v2.access answered.
func (s *Server) Refreshes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oauthLocked().refreshed
}

// installTokenLocked returns the installation of bot token tok, or the
// Slack error of a token that is none or expired.
func (s *Server) installTokenLocked(tok string, now time.Time) (in *Install, e string) {
	if s.oauth == nil {
		return nil, "invalid_auth"
	}
	in = s.oauth.tokens[tok]
	switch {
	case in == nil:
		return nil, "invalid_auth"
	case in.Rotate && !now.Before(in.expires):
		return nil, "token_expired"
	}
	return in, ""
}

// installTokenOKLocked reports whether tok is a live installation's bot
// token (a file download takes any: files are not modelled per team).
func (s *Server) installTokenOKLocked(tok string, now time.Time) bool {
	_, e := s.installTokenLocked(tok, now)
	return e == ""
}

// crossTeamLocked is the error of in's token naming channel: "" when the
// channel is of in's team, of its org-wide enterprise, or of no team set.
func (s *Server) crossTeamLocked(in *Install, channel string) string {
	team, ok := s.oauth.teams[channel]
	if !ok || channel == "" {
		return ""
	}
	if in.Org && in.Enterprise != "" && s.oauth.teamEnt[team] == in.Enterprise {
		return ""
	}
	if !in.Org && in.Team == team {
		return ""
	}
	return "channel_not_found"
}

// oauthV2Access answers oauth.v2.access: a code exchange or, with
// grant_type=refresh_token, a refresh.
func (s *Server) oauthV2Access(r *apiRequest) (result, string) {
	o := s.oauthLocked()
	switch {
	case r.get("client_id") != o.clientID:
		return nil, "invalid_client_id"
	case r.get("client_secret") != o.clientSecret:
		return nil, "bad_client_secret"
	}
	if r.get("grant_type") == "refresh_token" {
		in := o.refresh[r.get("refresh_token")]
		if in == nil {
			return nil, "invalid_refresh_token"
		}
		delete(o.refresh, in.RefreshToken) // revoked once used
		next := *in
		next.BotToken, next.RefreshToken = "", ""
		s.issueLocked(&next, r.now)
		o.refreshed++
		return installResult(&next), ""
	}
	g, ok := o.codes[r.get("code")]
	if !ok {
		return nil, "invalid_code"
	}
	delete(o.codes, r.get("code"))
	if g.redirect != r.get("redirect_uri") {
		return nil, "bad_redirect_uri"
	}
	in := g.in
	s.issueLocked(&in, r.now)
	return installResult(&in), ""
}

// installResult is oauth.v2.access's answer for in.
func installResult(in *Install) result {
	res := result{
		"access_token": in.BotToken, "token_type": "bot", "scope": strings.Join(in.Scopes, ","),
		"bot_user_id": in.BotUserID, "app_id": DefaultAppID,
		"is_enterprise_install": in.Org,
		"authed_user":           map[string]any{"id": in.InstalledBy},
	}
	if in.Team != "" {
		res["team"] = map[string]any{"id": in.Team, "name": in.TeamName}
	}
	if in.Enterprise != "" {
		res["enterprise"] = map[string]any{"id": in.Enterprise}
	}
	if in.Rotate {
		res["refresh_token"] = in.RefreshToken
		res["expires_in"], _ = strconv.Atoi(strconv.FormatFloat(in.TTL.Seconds(), 'f', 0, 64))
	}
	return res
}
