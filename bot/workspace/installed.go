package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/storage"
	"agentbot/storage/credentials"
)

// DefaultRefreshBefore is how long before a rotating token's expiry it is
// refreshed: Slack's rotating tokens live 12 hours
// (https://docs.slack.dev/authentication/using-token-rotation).
const DefaultRefreshBefore = 30 * time.Minute

// DefaultCacheTTL is how long an installation read from the store is used
// before it is read again (another replica may have refreshed or removed
// it).
const DefaultCacheTTL = time.Minute

// Installed answers each workspace with its installation's token, from
// the store (storage/credentials' Vault): the workspace's own
// installation, else its organization's org-wide one. A rotating token is
// refreshed at oauth.v2.access (grant_type=refresh_token) before it
// expires and the new tokens stored; a refresh another replica did first
// is found in the store. It is safe for concurrent use.
type Installed struct {
	// Vault keeps the installations.
	Vault *credentials.Vault
	// ClientID and ClientSecret are the Slack app's, for refreshes.
	ClientID, ClientSecret string
	// Options are given to every client made (the API URL, the HTTP
	// client); APIURL is the Web API base of refreshes ("": Slack's).
	Options []slack.Option
	APIURL  string
	// HTTP is the client of refreshes (nil: http.DefaultClient).
	HTTP *http.Client
	// RefreshBefore and CacheTTL default to DefaultRefreshBefore and
	// DefaultCacheTTL.
	RefreshBefore, CacheTTL time.Duration
	// Log receives refreshes and failures, never a token.
	Log *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu      sync.Mutex
	entries map[ID]*entry
}

// entry is a workspace's client as last read or refreshed.
type entry struct {
	in     credentials.Installation
	client Client
	read   time.Time
}

func (c *Installed) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Installed) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

// For returns the client of id's installation, refreshing its token when
// it expires soon.
func (c *Installed) For(ctx context.Context, id ID) (Client, error) {
	if id.Team == "" && id.Enterprise == "" {
		return Client{}, ErrNoWorkspace
	}
	c.mu.Lock()
	defer c.mu.Unlock() // one refresh at a time; reads are cached
	now := c.now()
	e := c.entries[id]
	if e == nil || now.Sub(e.read) >= c.cacheTTL() {
		in, err := c.Vault.Installation(ctx, id.Team, id.Enterprise)
		if errors.Is(err, storage.ErrNotFound) {
			delete(c.entries, id)
			return Client{}, fmt.Errorf("team %s (enterprise %q): %w", id.Team, id.Enterprise, ErrNotInstalled)
		}
		if err != nil {
			return Client{}, fmt.Errorf("installation of team %s: %w", id.Team, err)
		}
		e = c.entryOf(in, e, now)
		if c.entries == nil {
			c.entries = map[ID]*entry{}
		}
		c.entries[id] = e
	}
	if e.in.RefreshToken != "" && !e.in.Expiry.IsZero() && e.in.Expiry.Sub(now) < c.refreshBefore() {
		if err := c.refresh(ctx, id, e, now); err != nil {
			if now.Before(e.in.Expiry) {
				c.log().WarnContext(ctx, "slack token refresh failed; the current token serves until it expires", "team", id.Team, "enterprise", id.Enterprise, "err", err)
				return e.client, nil
			}
			return Client{}, err
		}
	}
	return e.client, nil
}

// entryOf is the entry of in, keeping old's client when the token is
// the same.
func (c *Installed) entryOf(in credentials.Installation, old *entry, now time.Time) *entry {
	if old != nil && old.in.BotToken == in.BotToken {
		return &entry{in: in, client: old.client, read: now}
	}
	return &entry{in: in, read: now, client: Client{API: slack.New(in.BotToken, c.Options...), BotUserID: in.BotUserID}}
}

// refresh trades e's refresh token for new tokens and stores them. When
// Slack refuses the refresh token (another replica used it first: a used
// refresh token is revoked), the store's newer tokens are taken instead.
func (c *Installed) refresh(ctx context.Context, id ID, e *entry, now time.Time) error {
	var opts []slack.OAuthOption
	if c.APIURL != "" {
		opts = append(opts, slack.OAuthOptionAPIURL(c.APIURL))
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := slack.RefreshOAuthV2TokenContext(ctx, hc, c.ClientID, c.ClientSecret, e.in.RefreshToken, opts...)
	if err != nil {
		if in, rerr := c.Vault.Installation(ctx, id.Team, id.Enterprise); rerr == nil && in.RefreshToken != e.in.RefreshToken {
			*e = *c.entryOf(in, e, now) // refreshed elsewhere
			return nil
		}
		return fmt.Errorf("refresh the token of team %s: %w", id.Team, err)
	}
	in := e.in
	in.BotToken, in.RefreshToken = resp.AccessToken, resp.RefreshToken
	in.Expiry = now.Add(time.Duration(resp.ExpiresIn) * time.Second)
	if err := c.Vault.PutInstallation(ctx, in); err != nil {
		return fmt.Errorf("store the refreshed token of team %s: %w", id.Team, err)
	}
	*e = *c.entryOf(in, e, now)
	c.log().InfoContext(ctx, "slack token refreshed", "team", id.Team, "enterprise", id.Enterprise, "expiry", in.Expiry)
	return nil
}

// Forget drops what is cached of id, so the next call reads the store.
func (c *Installed) Forget(id ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k == id || (id.Team == "" && k.Enterprise == id.Enterprise) {
			delete(c.entries, k)
		}
	}
}

// Uninstall forgets the installation that answers id (app_uninstalled,
// tokens_revoked): the workspace's own, or its organization's when the
// payload says the install is org-wide.
func (c *Installed) Uninstall(ctx context.Context, id ID, org bool) error {
	key, err := c.uninstallKey(id, org)
	if err != nil {
		return err
	}
	if err := c.Vault.DeleteInstallation(ctx, key, org); err != nil {
		return err
	}
	if org {
		c.Forget(ID{Enterprise: id.Enterprise})
	} else {
		c.Forget(id)
	}
	c.log().InfoContext(ctx, "slack installation removed", "team", id.Team, "enterprise", id.Enterprise, "org", org)
	return nil
}

func (c *Installed) uninstallKey(id ID, org bool) (string, error) {
	if org {
		if id.Enterprise == "" {
			return "", errors.New("uninstall: org-wide without an enterprise id")
		}
		return id.Enterprise, nil
	}
	if strings.TrimSpace(id.Team) == "" {
		return "", errors.New("uninstall: no team id")
	}
	return id.Team, nil
}

func (c *Installed) cacheTTL() time.Duration {
	if c.CacheTTL > 0 {
		return c.CacheTTL
	}
	return DefaultCacheTTL
}

func (c *Installed) refreshBefore() time.Duration {
	if c.RefreshBefore > 0 {
		return c.RefreshBefore
	}
	return DefaultRefreshBefore
}
