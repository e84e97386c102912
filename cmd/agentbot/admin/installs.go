package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/slack-go/slack"

	"agentbot/cmd/agentbot/stores"
	"agentbot/storage"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// InstallsSynopsis is the synopsis of agentbot installs.
const InstallsSynopsis = "list | revoke ID"

// Installs is agentbot installs: the Slack workspaces and organizations
// agentbot is installed in (SLACK_CLIENT_ID), listed without their tokens,
// and revoked one by one.
type Installs struct {
	Stdout, Stderr io.Writer
	Store          stores.Store
	// Getenv reads the key settings (secretbox.Load); revoke needs them.
	Getenv func(string) string
	// APIURL is the Slack Web API base revoke calls auth.revoke at (""
	// Slack's); HTTP its client (nil: one with RevokeTimeout).
	APIURL string
	HTTP   *http.Client
}

// Run lists or revokes installations, as args say, and returns the exit
// code. list reads a running agentbot's bbolt store through its control
// socket; revoke opens the store itself.
func (o *Installs) Run(ctx context.Context, args []string) int {
	switch {
	case len(args) == 1 && args[0] == "list":
		return o.list(ctx)
	case len(args) == 2 && args[0] == "revoke":
		return o.revoke(ctx, args[1])
	}
	fmt.Fprintln(o.Stderr, "usage: agentbot installs "+InstallsSynopsis+"   (ID: a team id, or an organization's enterprise id; list names them)")
	return 2
}

// list prints the installations, never a token.
func (o *Installs) list(ctx context.Context) int {
	list, code, ok := listCredentials(ctx, o.Store, o.Stderr, "installs list", credentials.InstallFilter)
	if !ok {
		return code
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tBOT USER\tTOKEN EXPIRES\tSCOPES\tUPDATED")
	for _, in := range credentials.InstallsOf(list) {
		kind := "workspace"
		if in.Org {
			kind = "organization"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.ID, kind, dash(in.BotUser), when(in.Expiry), dash(strings.Join(in.Scopes, ",")), when(in.Updated))
	}
	tw.Flush()
	return 0
}

// revoke revokes the installation of id at Slack (auth.revoke with its
// bot token: Slack then sends tokens_revoked and app_uninstalled where it
// was the last token), then deletes it whatever Slack said. It exits 1
// when the revocation failed (the installation is deleted all the same).
func (o *Installs) revoke(ctx context.Context, id string) int {
	kr, err := secretbox.Load(o.Getenv)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot installs revoke: %v\n", err)
		return 2
	}
	st, err := o.Store.Open(ctx)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot installs revoke: %v\n", err)
		return stores.ExitCode(err)
	}
	defer st.Close()
	v, err := credentials.New(st, kr, nil)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot installs revoke: %v\n", err)
		return 1
	}
	in, err := v.Installation(ctx, id, id) // a team's own, else an organization's
	if errors.Is(err, storage.ErrNotFound) {
		fmt.Fprintf(o.Stderr, "agentbot installs revoke: no installation %s (agentbot installs list names them)\n", id)
		return 1
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot installs revoke: %v\n", err)
		return 1
	}
	rerr := o.authRevoke(ctx, in.BotToken)
	if rerr != nil {
		fmt.Fprintf(o.Stderr, "agentbot installs revoke: auth.revoke failed: %v (deleting it here all the same)\n", rerr)
	} else {
		fmt.Fprintf(o.Stdout, "revoked the bot token of %s at Slack\n", id)
	}
	key, _, _ := in.Key()
	if err := v.DeleteInstallation(ctx, key, in.EnterpriseInstall); err != nil {
		fmt.Fprintf(o.Stderr, "agentbot installs revoke: %v\n", err)
		return 1
	}
	fmt.Fprintf(o.Stdout, "deleted installation %s\n", key)
	if rerr != nil {
		return 1
	}
	return 0
}

// authRevoke revokes token at Slack.
func (o *Installs) authRevoke(ctx context.Context, token string) error {
	hc := o.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: RevokeTimeout}
	}
	opts := []slack.Option{slack.OptionHTTPClient(hc)}
	if o.APIURL != "" {
		opts = append(opts, slack.OptionAPIURL(o.APIURL))
	}
	_, err := slack.New(token, opts...).SendAuthRevokeContext(ctx, token)
	return err
}
