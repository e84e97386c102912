// Package slackinstall installs agentbot into Slack workspaces and
// organizations: an "Add to Slack" page (/slack/install) and the OAuth v2
// redirect (/slack/oauth_redirect) that exchanges the code at
// oauth.v2.access and keeps the installation, sealed, in the store
// (storage/credentials' Vault), keyed by its team, or by its enterprise
// when installed org-wide (is_enterprise_install).
//
// The state of each flow is random, kept in the store (sealed, under a
// hash of it) so any replica can finish it, single use and expiring, and
// bound to the browser that began it: the page sets a cookie holding a
// second random value whose hash the flow keeps, and the redirect is
// refused unless the same browser brings it back. A forged, replayed,
// expired or cross-browser state installs nothing.
package slackinstall

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"agentbot/engine/mcp/oauth"
	"agentbot/storage/credentials"
)

// Paths the handler serves, under the public URL.
const (
	InstallPath  = "/slack/install"
	RedirectPath = "/slack/oauth_redirect"
)

// cookieName is the cookie that binds a flow to its browser.
const cookieName = "agentbot_slack_install"

// DefaultAuthorizeURL is Slack's OAuth v2 authorization page.
const DefaultAuthorizeURL = "https://slack.com/oauth/v2/authorize"

// DefaultTTL is how long a flow may be finished after its page was
// served.
const DefaultTTL = 10 * time.Minute

// BotScopes are the bot scopes an install asks for: manifest.yaml's
// oauth_config.scopes.bot (a test keeps them equal).
var BotScopes = []string{
	"app_mentions:read", "assistant:write", "channels:history", "channels:read", "chat:write",
	"chat:write.customize", "commands", "files:read", "files:write", "groups:history", "groups:read",
	"im:history", "im:write", "mpim:history", "users:read",
}

// Config configures a Handler.
type Config struct {
	// ClientID and ClientSecret are the Slack app's (SLACK_CLIENT_ID,
	// SLACK_CLIENT_SECRET).
	ClientID, ClientSecret string
	// PublicURL is where people reach agentbot (AGENTBOT_PUBLIC_URL); the
	// redirect URL is PublicURL + RedirectPath.
	PublicURL string
	// Vault keeps flows and installations.
	Vault *credentials.Vault
	// Scopes are the bot scopes asked for (nil: BotScopes).
	Scopes []string
	// AuthorizeURL is Slack's authorization page (""
	// DefaultAuthorizeURL); APIURL is the Web API base ("": Slack's).
	AuthorizeURL, APIURL string
	// HTTP is the client of oauth.v2.access (nil: http.DefaultClient).
	HTTP *http.Client
	// TTL bounds a flow (0: DefaultTTL).
	TTL time.Duration
	// Installed, when set, is told of each installation stored (to drop
	// a cached client of its key).
	Installed func(credentials.Installation)
	// Log receives what happened, never a token, code or state.
	Log *slog.Logger
}

// Handler serves InstallPath and RedirectPath.
type Handler struct {
	cfg Config
}

// New returns the install flow's handler; the client id and secret, the
// public URL and the vault are required.
func New(cfg Config) (*Handler, error) {
	switch {
	case cfg.ClientID == "" || cfg.ClientSecret == "":
		return nil, errors.New("slack install: SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are both needed")
	case cfg.PublicURL == "":
		return nil, errors.New("slack install: AGENTBOT_PUBLIC_URL is needed for the OAuth redirect")
	case cfg.Vault == nil:
		return nil, errors.New("slack install: no vault (AGENTBOT_SECRET_KEY) to keep installations in")
	}
	if cfg.Scopes == nil {
		cfg.Scopes = BotScopes
	}
	if cfg.AuthorizeURL == "" {
		cfg.AuthorizeURL = DefaultAuthorizeURL
	}
	if cfg.HTTP == nil {
		cfg.HTTP = http.DefaultClient
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &Handler{cfg: cfg}, nil
}

// cookiePath is the path the browser sees the flow's pages under: the
// public URL's path (a proxy may serve agentbot under one) and /slack/.
func (h *Handler) cookiePath() string {
	u, err := url.Parse(h.cfg.PublicURL)
	if err != nil {
		return "/slack/"
	}
	return strings.TrimRight(u.Path, "/") + "/slack/"
}

// RedirectURL is the redirect URL to register in the Slack app.
func (h *Handler) RedirectURL() string { return h.cfg.PublicURL + RedirectPath }

// ServeHTTP serves the install page and the redirect.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	switch r.URL.Path {
	case InstallPath:
		h.begin(w, r)
	case RedirectPath:
		h.finish(w, r)
	default:
		http.NotFound(w, r)
	}
}

// random returns n random bytes, base64url.
func random(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// browserHash is what a flow keeps of its browser's cookie value.
func browserHash(v string) string {
	sum := sha256.Sum256([]byte("agentbot slack install browser\x00" + v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// begin stores a new flow and serves the page with its "Add to Slack"
// link, setting the cookie that binds the flow to this browser.
func (h *Handler) begin(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	state, nonce := random(32), random(32)
	f := oauth.Flow{State: state, ClientID: h.cfg.ClientID, Scopes: h.cfg.Scopes, RedirectURL: h.RedirectURL(),
		Created: now, Expires: now.Add(h.cfg.TTL), Caller: map[string]string{"kind": "slack-install", "browser": browserHash(nonce)}}
	if err := h.cfg.Vault.PutFlow(r.Context(), f); err != nil {
		h.cfg.Log.ErrorContext(r.Context(), "slack install: store flow", "err", err)
		h.page(w, http.StatusInternalServerError, "Installation is unavailable", "agentbot could not begin the installation; try again later.", "")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: nonce, Path: h.cookiePath(), MaxAge: int(h.cfg.TTL.Seconds()),
		HttpOnly: true, Secure: strings.HasPrefix(h.cfg.PublicURL, "https://"), SameSite: http.SameSiteLaxMode})
	q := url.Values{"client_id": {h.cfg.ClientID}, "scope": {strings.Join(h.cfg.Scopes, ",")}, "state": {state}, "redirect_uri": {h.RedirectURL()}}
	h.page(w, http.StatusOK, "Add agentbot to Slack", "Install agentbot into your workspace or organization.", h.cfg.AuthorizeURL+"?"+q.Encode())
}

// finish checks the redirect's state against the stored flow and the
// browser's cookie, exchanges the code and stores the installation.
func (h *Handler) finish(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		h.cfg.Log.InfoContext(ctx, "slack install: refused in Slack", "error", e)
		h.page(w, http.StatusOK, "Installation cancelled", "Nothing was installed.", "")
		return
	}
	if err := h.checkState(ctx, r, q.Get("state")); err != nil {
		h.cfg.Log.WarnContext(ctx, "slack install: state refused", "err", err)
		h.page(w, http.StatusBadRequest, "Installation refused", "This installation link is invalid, used already or expired: start again from the install page.", h.cfg.PublicURL+InstallPath)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: h.cookiePath(), MaxAge: -1, HttpOnly: true})
	in, err := h.exchange(ctx, q.Get("code"))
	if err != nil {
		h.cfg.Log.WarnContext(ctx, "slack install: exchange", "err", err)
		h.page(w, http.StatusBadGateway, "Installation failed", "Slack did not confirm the installation; start again from the install page.", h.cfg.PublicURL+InstallPath)
		return
	}
	if err := h.cfg.Vault.PutInstallation(ctx, in); err != nil {
		h.cfg.Log.ErrorContext(ctx, "slack install: store", "err", err)
		h.page(w, http.StatusInternalServerError, "Installation failed", "agentbot could not keep the installation; try again later.", "")
		return
	}
	if h.cfg.Installed != nil {
		h.cfg.Installed(in)
	}
	h.cfg.Log.InfoContext(ctx, "slack install: installed", "installation", in)
	h.page(w, http.StatusOK, "agentbot is installed", "You can mention @agentbot or open its Home tab in Slack now.", "")
}

// errState: the redirect's state is not a live flow of this browser.
var errState = errors.New("state forged, used already, expired or of another browser")

// checkState takes the flow of state (so it serves once) and checks it
// was begun by this browser for a Slack install.
func (h *Handler) checkState(ctx context.Context, r *http.Request, state string) error {
	f, err := h.cfg.Vault.TakeFlow(ctx, state)
	if err != nil {
		return fmt.Errorf("%w: %w", errState, err)
	}
	c, err := r.Cookie(cookieName)
	if err != nil || f.Caller["kind"] != "slack-install" {
		return fmt.Errorf("%w: no browser cookie or not an install flow", errState)
	}
	if subtle.ConstantTimeCompare([]byte(browserHash(c.Value)), []byte(f.Caller["browser"])) != 1 {
		return fmt.Errorf("%w: another browser's", errState)
	}
	return nil
}

// exchange trades code for the installation at oauth.v2.access.
func (h *Handler) exchange(ctx context.Context, code string) (credentials.Installation, error) {
	if code == "" {
		return credentials.Installation{}, errors.New("no code")
	}
	var opts []slack.OAuthOption
	if h.cfg.APIURL != "" {
		opts = append(opts, slack.OAuthOptionAPIURL(h.cfg.APIURL))
	}
	resp, err := slack.GetOAuthV2ResponseContext(ctx, h.cfg.HTTP, h.cfg.ClientID, h.cfg.ClientSecret, code, h.RedirectURL(), opts...)
	if err != nil {
		return credentials.Installation{}, fmt.Errorf("oauth.v2.access: %w", err)
	}
	return FromResponse(resp, time.Now()), nil
}

// FromResponse is the installation oauth.v2.access answered with at now.
func FromResponse(resp *slack.OAuthV2Response, now time.Time) credentials.Installation {
	in := credentials.Installation{
		Team: resp.Team.ID, TeamName: resp.Team.Name, Enterprise: resp.Enterprise.ID, EnterpriseInstall: resp.IsEnterpriseInstall,
		BotToken: resp.AccessToken, BotUserID: resp.BotUserID, AppID: resp.AppID, RefreshToken: resp.RefreshToken,
		InstalledBy: resp.AuthedUser.ID, Installed: now,
	}
	for s := range strings.SplitSeq(resp.Scope, ",") {
		if s = strings.TrimSpace(s); s != "" {
			in.Scopes = append(in.Scopes, s)
		}
	}
	if resp.ExpiresIn > 0 {
		in.Expiry = now.Add(time.Duration(resp.ExpiresIn) * time.Second)
	}
	return in
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p>
{{if .Link}}<p><a href="{{.Link}}">{{if .Add}}Add to Slack{{else}}Start again{{end}}</a></p>{{end}}
</body></html>
`))

// page writes a small HTML page with status, an optional link.
func (h *Handler) page(w http.ResponseWriter, status int, title, text, link string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pageTmpl.Execute(w, map[string]any{"Title": title, "Text": text, "Link": link, "Add": status == http.StatusOK && link != ""})
}
