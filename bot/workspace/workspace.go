// Package workspace says which Slack workspace a piece of work is for,
// and gives the Web API client that answers it: the one bot token of a
// single-workspace app (Single), or the token of the workspace's
// installation (Installed: the workspace's own, else its organization's
// org-wide one), refreshed before it expires when token rotation is on.
//
// The workspace travels in the context (With, Of): the bot puts it there
// where an event, a command, a click or a queued item comes in, and every
// Web API call made under that context is made with that workspace's
// token. A call under a context without one, or of a workspace without an
// installation, fails: no workspace is ever answered with another's
// token.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/slack-go/slack"
)

// ID names a workspace as Slack's payloads do: its team id, and the
// enterprise id of its organization (Enterprise Grid), "" outside one.
type ID struct {
	Team, Enterprise string
}

type ctxKey struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id ID) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// Of returns the workspace ctx carries.
func Of(ctx context.Context) (ID, bool) {
	id, ok := ctx.Value(ctxKey{}).(ID)
	return id, ok
}

// In returns ctx naming team as its workspace: ctx itself when it names
// team already (with its enterprise), else ctx carrying team alone (an
// Installed remembers the enterprise of each team it has seen). "" keeps
// ctx as it is.
func In(ctx context.Context, team string) context.Context {
	if id, ok := Of(ctx); team == "" || ok && id.Team == team {
		return ctx
	}
	return With(ctx, ID{Team: team})
}

// Client is what answers one workspace: the Web API client with its bot
// token, and who the bot is there.
type Client struct {
	API *slack.Client
	// BotUserID is the bot's user id there; BotID its bot id ("" when
	// unknown).
	BotUserID, BotID string
}

// Clients gives the client that answers a workspace.
type Clients interface {
	// For returns the client of id; a workspace agentbot is not
	// installed in is an error matching ErrNotInstalled.
	For(ctx context.Context, id ID) (Client, error)
}

// Uninstaller forgets installations when Slack says they are gone.
type Uninstaller interface {
	// Uninstall forgets the installation answering id; with botUsers,
	// only when its bot user is among them (tokens_revoked).
	Uninstall(ctx context.Context, id ID, botUsers ...string) error
}

// ErrNotInstalled: agentbot has no installation answering the workspace.
var ErrNotInstalled = errors.New("agentbot is not installed in the workspace")

// ErrNoWorkspace: a Web API call was made under a context that names no
// workspace, where several are served; it is refused rather than made
// with any token.
var ErrNoWorkspace = errors.New("no workspace in the call's context")

// Single is a single-workspace app: one bot token (SLACK_BOT_TOKEN) for
// everything, whatever the context says.
type Single struct {
	Client
}

// For returns the one client.
func (s *Single) For(context.Context, ID) (Client, error) { return s.Client, nil }

// Resolve returns the client of ctx's workspace from cs. Without a
// workspace in ctx, a Single answers still; any other Clients refuses
// (ErrNoWorkspace).
func Resolve(ctx context.Context, cs Clients) (Client, error) {
	id, ok := Of(ctx)
	if _, single := cs.(*Single); !ok && !single {
		return Client{}, ErrNoWorkspace
	}
	return cs.For(ctx, id)
}

// Failing returns a client whose every call fails with err without
// reaching Slack: what a call of a workspace without a token gets, so no
// call site needs a path of its own for it.
func Failing(err error) *slack.Client {
	return slack.New("", slack.OptionHTTPClient(failingDoer{err}))
}

type failingDoer struct{ err error }

func (f failingDoer) Do(*http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("no token: %w", f.err)
}
