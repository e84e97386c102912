package credentials

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"agentbot/storage"
)

// InstallUser is the user of the records that hold agentbot's
// installations into Slack workspaces and organizations: no Slack user id,
// storage.ServiceUser or storage.ClientUser looks like it, so an
// installation never meets an MCP credential's key.
const InstallUser = "(install)"

// The servers of installation records: a workspace's, keyed by its team
// id, and an organization's (an org-wide install), keyed by its
// enterprise id.
const (
	installWorkspace = "slack"
	installOrg       = "slack-org"
)

// Installation is agentbot installed into a Slack workspace, or into a
// whole Enterprise Grid organization (Enterprise): what oauth.v2.access
// answered, with the bot token and the refresh token sealed at rest.
type Installation struct {
	// Team is the workspace's id; "" for an org-wide install.
	Team string `json:"team,omitempty"`
	// TeamName is the workspace's name, for listings.
	TeamName string `json:"team_name,omitempty"`
	// Enterprise is the organization's id, for a workspace of an
	// organization and for an org-wide install.
	Enterprise string `json:"enterprise,omitempty"`
	// EnterpriseInstall: installed org-wide, keyed by Enterprise.
	EnterpriseInstall bool `json:"is_enterprise_install,omitempty"`
	// BotToken is the bot token (xoxb-, or xoxe.xoxb- when rotated).
	BotToken string `json:"bot_token"`
	// BotUserID is the bot's user id in the workspace or organization.
	BotUserID string `json:"bot_user_id"`
	// AppID is the Slack app's id.
	AppID string `json:"app_id,omitempty"`
	// Scopes are the bot scopes granted.
	Scopes []string `json:"scopes,omitempty"`
	// RefreshToken is set when token rotation is on; Expiry is then when
	// BotToken expires.
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// InstalledBy is the Slack user who installed.
	InstalledBy string `json:"installed_by,omitempty"`
	// Installed is when the installation was stored first.
	Installed time.Time `json:"installed"`
}

// LogValue names the installation without its tokens.
func (in Installation) LogValue() slog.Value {
	return slog.GroupValue(slog.String("team", in.Team), slog.String("enterprise", in.Enterprise), slog.Bool("org", in.EnterpriseInstall),
		slog.String("bot_user", in.BotUserID), slog.Bool("rotating", in.RefreshToken != ""), slog.Time("expiry", in.Expiry))
}

// Key is the installation's key: its enterprise id when installed
// org-wide, its team id otherwise.
func (in Installation) Key() (team, server string, err error) {
	if in.EnterpriseInstall {
		if in.Enterprise == "" {
			return "", "", errors.New("org-wide installation without an enterprise id")
		}
		return in.Enterprise, installOrg, nil
	}
	if in.Team == "" {
		return "", "", errors.New("installation without a team id")
	}
	return in.Team, installWorkspace, nil
}

// InstallInfo is an installation without its secrets, as listed.
type InstallInfo struct {
	// ID is the team id, or the enterprise id when Org.
	ID string `json:"id"`
	// Org: installed org-wide.
	Org bool `json:"org,omitempty"`
	// BotUser is the bot's user id there.
	BotUser string `json:"bot_user,omitempty"`
	// Scopes are the granted bot scopes.
	Scopes []string `json:"scopes,omitempty"`
	// Expiry is when the bot token expires (token rotation); zero when it
	// does not.
	Expiry time.Time `json:"expiry,omitzero"`
	// Updated is when the record was last stored.
	Updated time.Time `json:"updated"`
}

// PutInstallation stores in, replacing the installation of its key; its
// tokens are sealed bound to that key. A zero Installed is now.
func (vt *Vault) PutInstallation(ctx context.Context, in Installation) error {
	team, server, err := in.Key()
	if err != nil {
		return fmt.Errorf("store installation: %w", err)
	}
	if in.BotToken == "" {
		return fmt.Errorf("store installation %s: no bot token", team)
	}
	if in.Installed.IsZero() {
		in.Installed = time.Now()
	}
	info := storage.CredentialInfo{Team: team, User: InstallUser, Server: server, Account: in.BotUserID, Scopes: in.Scopes, Expiry: in.Expiry}
	if err := vt.put(ctx, info, in); err != nil {
		return err
	}
	vt.log.DebugContext(ctx, "installation stored", "installation", in)
	return nil
}

// Installation returns the installation that answers for a payload of
// team and enterprise: the workspace's own when team has one, else the
// organization's org-wide one. None is an error matching
// storage.ErrNotFound.
func (vt *Vault) Installation(ctx context.Context, team, enterprise string) (Installation, error) {
	var in Installation
	if team != "" {
		_, err := vt.open(ctx, team, InstallUser, installWorkspace, &in)
		if err == nil || !errors.Is(err, storage.ErrNotFound) {
			return in, err
		}
	}
	if enterprise != "" {
		_, err := vt.open(ctx, enterprise, InstallUser, installOrg, &in)
		return in, err
	}
	return Installation{}, fmt.Errorf("installation of team %q: %w", team, storage.ErrNotFound)
}

// DeleteInstallation forgets the installation of id (a team id, or an
// enterprise id when org); none is not an error.
func (vt *Vault) DeleteInstallation(ctx context.Context, id string, org bool) error {
	server := installWorkspace
	if org {
		server = installOrg
	}
	if err := vt.st.DeleteCredential(ctx, id, InstallUser, server); err != nil {
		return err
	}
	vt.log.DebugContext(ctx, "installation deleted", "id", id, "org", org)
	return nil
}

// ListInstallations lists every installation, without secrets.
func (vt *Vault) ListInstallations(ctx context.Context) ([]InstallInfo, error) {
	list, err := vt.st.ListCredentials(ctx, InstallFilter)
	if err != nil {
		return nil, err
	}
	return InstallsOf(list), nil
}

// InstallFilter selects the installation records of a store's
// credentials.
var InstallFilter = storage.CredentialFilter{User: InstallUser}

// InstallsOf are the installations among list (a store's credentials, as
// InstallFilter selects them), without secrets: what listing them needs no
// key for.
func InstallsOf(list []storage.CredentialInfo) []InstallInfo {
	out := make([]InstallInfo, 0, len(list))
	for _, c := range list {
		if c.Server != installWorkspace && c.Server != installOrg {
			continue
		}
		out = append(out, InstallInfo{ID: c.Team, Org: c.Server == installOrg, BotUser: c.Account, Scopes: c.Scopes, Expiry: c.Expiry, Updated: c.Updated})
	}
	return out
}
