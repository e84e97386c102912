// Package installs wires a Slack app distributed to other workspaces
// (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET): the installations sealed in
// the store under the secret key (storage/credentials), the install flow
// on the public side (bot/slackinstall: /slack/install,
// /slack/oauth_redirect), and the bot's clients, one per installation
// (bot/workspace.Installed). Without SLACK_CLIENT_ID the bot has its one
// SLACK_BOT_TOKEN and none of this exists.
package installs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/slackinstall"
	"agentbot/bot/workspace"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// Settings are what a distributed app needs.
type Settings struct {
	// ClientID and ClientSecret are the app's (SLACK_CLIENT_ID,
	// SLACK_CLIENT_SECRET); without ClientID, Setup does nothing.
	ClientID, ClientSecret string
	// PublicURL is where people install from (AGENTBOT_PUBLIC_URL).
	PublicURL string
	// APIURL is the Slack Web API base (SLACK_API_URL; "": Slack's).
	APIURL string
	// HTTP is the client of every Slack call of the installations.
	HTTP *http.Client
}

// Installs is a distributed app's wiring.
type Installs struct {
	Vault   *credentials.Vault
	Clients *workspace.Installed
	Handler *slackinstall.Handler
}

// Setup wires the installations of set over st, sealed under the secret
// key getenv names (AGENTBOT_SECRET_KEY or _FILE). It returns nil, nil
// without set.ClientID; a distributed app without a public URL or a key
// is an error saying what to set.
func Setup(set Settings, st storage.Credentials, getenv func(string) string, log *slog.Logger) (*Installs, error) {
	if set.ClientID == "" {
		return nil, nil
	}
	kr, err := secretbox.Load(getenv)
	if errors.Is(err, secretbox.ErrNoKey) {
		return nil, fmt.Errorf("SLACK_CLIENT_ID is set: installations keep their bot tokens encrypted, and there is %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("SLACK_CLIENT_ID is set: the secret key: %w", err)
	}
	if set.PublicURL == "" {
		return nil, errors.New("SLACK_CLIENT_ID is set: people install agentbot at AGENTBOT_PUBLIC_URL/slack/install, and AGENTBOT_PUBLIC_URL is not set")
	}
	vault, err := credentials.New(st, kr, log)
	if err != nil {
		return nil, err
	}
	hc := set.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if set.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(set.APIURL))
	}
	clients := &workspace.Installed{Vault: vault, ClientID: set.ClientID, ClientSecret: set.ClientSecret,
		Options: opts, APIURL: set.APIURL, HTTP: hc, Log: log}
	h, err := slackinstall.New(slackinstall.Config{ClientID: set.ClientID, ClientSecret: set.ClientSecret, PublicURL: set.PublicURL,
		Vault: vault, APIURL: set.APIURL, HTTP: hc, Log: log,
		Installed: func(in credentials.Installation) {
			clients.Forget(workspace.ID{Team: in.Team, Enterprise: map[bool]string{true: in.Enterprise}[in.EnterpriseInstall]})
		}})
	if err != nil {
		return nil, err
	}
	return &Installs{Vault: vault, Clients: clients, Handler: h}, nil
}

// BotClients is bot.Config's Clients: nil (the one SLACK_BOT_TOKEN)
// without installations.
func (i *Installs) BotClients() workspace.Clients {
	if i == nil {
		return nil
	}
	return i.Clients
}

// Mount serves the install flow on mux, under /slack/.
func (i *Installs) Mount(mux *http.ServeMux) {
	if i != nil {
		mux.Handle("/slack/", i.Handler)
	}
}

// Health is the installations' part of /healthz: an error naming each
// installation whose rotating token expired (its refresh failed), so
// that workspace is not answered; nil when every token is live.
func (i *Installs) Health(ctx context.Context) error {
	if i == nil {
		return nil
	}
	list, err := i.Vault.ListInstallations(ctx)
	if err != nil {
		return fmt.Errorf("installations: %w", err)
	}
	var dead []string
	now := time.Now()
	for _, in := range list {
		if !in.Expiry.IsZero() && !now.Before(in.Expiry) {
			dead = append(dead, in.ID)
		}
	}
	if len(dead) > 0 {
		return fmt.Errorf("%d of %d installations have an expired token (refresh failed): %s", len(dead), len(list), strings.Join(dead, ", "))
	}
	return nil
}
