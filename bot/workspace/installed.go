package workspace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot/cache"
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
	// locks serialise the store reads and refreshes of each workspace.
	locks cache.Locks[ID]
	// orgOf is the enterprise of each team seen with one, so a call
	// naming the team alone finds an org-wide install.
	orgOf map[string]string
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
// it expires soon. A cached client answers without a lock held; a read of
// the store or a refresh runs for one workspace at a time, never holding
// up the others.
func (c *Installed) For(ctx context.Context, id ID) (Client, error) {
	if id.Team == "" && id.Enterprise == "" {
		return Client{}, ErrNoWorkspace
	}
	c.mu.Lock()
	id = c.learn(id)
	e := c.entries[id]
	c.mu.Unlock()
	now := c.now()
	if e != nil && now.Sub(e.read) < c.cacheTTL() && !c.due(e.in, now) {
		return e.client, nil
	}
	defer c.locks.Lock(id)()
	e, err := c.load(ctx, id, now)
	if err != nil {
		return Client{}, err
	}
	if !c.due(e.in, now) {
		return e.client, nil
	}
	next, err := c.refresh(ctx, id, e, now)
	if err != nil {
		if now.Before(e.in.Expiry) {
			c.log().WarnContext(ctx, "slack token refresh failed; the current token serves until it expires", "team", id.Team, "enterprise", id.Enterprise, "err", err)
			return e.client, nil
		}
		return Client{}, err
	}
	c.put(id, next)
	return next.client, nil
}

// due reports whether in's rotating token expires within RefreshBefore.
func (c *Installed) due(in credentials.Installation, now time.Time) bool {
	return in.RefreshToken != "" && !in.Expiry.IsZero() && in.Expiry.Sub(now) < c.refreshBefore()
}

// load reads id's installation from the store and caches it.
func (c *Installed) load(ctx context.Context, id ID, now time.Time) (*entry, error) {
	in, err := c.Vault.Installation(ctx, id.Team, id.Enterprise)
	if errors.Is(err, storage.ErrNotFound) {
		c.mu.Lock()
		delete(c.entries, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("team %s (enterprise %q): %w", id.Team, id.Enterprise, ErrNotInstalled)
	}
	if err != nil {
		return nil, fmt.Errorf("installation of team %s: %w", id.Team, err)
	}
	c.mu.Lock()
	old := c.entries[id]
	c.mu.Unlock()
	e := c.entryOf(in, old, now)
	c.put(id, e)
	return e, nil
}

// put caches e as id's entry. Entries are never changed once cached: a
// reader holds no lock.
func (c *Installed) put(id ID, e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[ID]*entry{}
	}
	c.entries[id] = e
}

// learn remembers id's enterprise, or fills it in from what was learnt.
func (c *Installed) learn(id ID) ID {
	if id.Team == "" {
		return id
	}
	if id.Enterprise == "" {
		id.Enterprise = c.orgOf[id.Team]
		return id
	}
	if c.orgOf == nil {
		c.orgOf = map[string]string{}
	}
	c.orgOf[id.Team] = id.Enterprise
	return id
}

// entryOf is the entry of in, keeping old's client when the token is
// the same.
func (c *Installed) entryOf(in credentials.Installation, old *entry, now time.Time) *entry {
	if old != nil && old.in.BotToken == in.BotToken {
		return &entry{in: in, client: old.client, read: now}
	}
	return &entry{in: in, read: now, client: Client{API: slack.New(in.BotToken, c.Options...), BotUserID: in.BotUserID}}
}

// refresh trades e's refresh token for new tokens, stores them and
// returns the new entry. When Slack refuses the refresh token (another
// replica used it first: a used refresh token is revoked), the store's
// newer tokens are taken instead.
func (c *Installed) refresh(ctx context.Context, id ID, e *entry, now time.Time) (*entry, error) {
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
			return c.entryOf(in, e, now), nil // refreshed elsewhere
		}
		return nil, fmt.Errorf("refresh the token of team %s: %w", id.Team, err)
	}
	in := e.in
	in.BotToken, in.RefreshToken = resp.AccessToken, resp.RefreshToken
	in.Expiry = now.Add(time.Duration(resp.ExpiresIn) * time.Second)
	if err := c.Vault.PutInstallation(ctx, in); err != nil {
		return nil, fmt.Errorf("store the refreshed token of team %s: %w", id.Team, err)
	}
	c.log().InfoContext(ctx, "slack token refreshed", "team", id.Team, "enterprise", id.Enterprise, "expiry", in.Expiry)
	return c.entryOf(in, e, now), nil
}

// Forget drops what is cached of id's team, or of every team of id's
// enterprise when id names no team, so the next call reads the store.
func (c *Installed) Forget(id ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if id.Team != "" && k.Team == id.Team || id.Team == "" && k.Enterprise == id.Enterprise {
			delete(c.entries, k)
		}
	}
}

// Uninstall forgets the installation that answers id (app_uninstalled):
// the workspace's own, else its organization's org-wide one. With
// botUsers (tokens_revoked's bot user ids) it forgets it only when its bot
// user is among them. None is not an error.
func (c *Installed) Uninstall(ctx context.Context, id ID, botUsers ...string) error {
	c.mu.Lock()
	id = c.learn(id)
	c.mu.Unlock()
	in, err := c.Vault.Installation(ctx, id.Team, id.Enterprise)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(botUsers) > 0 && !slices.Contains(botUsers, in.BotUserID) {
		return nil
	}
	key, _, err := in.Key()
	if err != nil {
		return err
	}
	if err := c.Vault.DeleteInstallation(ctx, key, in.EnterpriseInstall); err != nil {
		return err
	}
	if in.EnterpriseInstall {
		c.Forget(ID{Enterprise: in.Enterprise})
	} else {
		c.Forget(ID{Team: in.Team})
	}
	c.log().InfoContext(ctx, "slack installation removed", "team", in.Team, "enterprise", in.Enterprise, "org", in.EnterpriseInstall)
	return nil
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
