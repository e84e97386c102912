package bot

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"agentbot/bot/access"
	"agentbot/bot/cache"
	"agentbot/bot/running"
	"agentbot/bot/threadgap"
	"agentbot/bot/threadstate"
	"agentbot/bot/threadwork"
	"agentbot/bot/workspace"
	"agentbot/engine"
)

// core is what every part of the bot shares: its configuration, who it is
// in Slack, the Slack writer (post, update, ephemeral, the greeting and
// picker, uploads), who may do what (may), the turns that can be
// stopped, and the threads' durable work with their state (state,
// setState, saveSession).
type core struct {
	cfg Config
	log *slog.Logger
	obs Observer

	// botUserID, botID and teamID are the bot's in its one workspace
	// (auth.test at Run) when it has a single token; with Config.Clients
	// they are each workspace's (self).
	botUserID string
	botID     string
	teamID    string
	// clients gives each workspace its Web API client (Config.Clients);
	// nil with a single token (Config.API).
	clients workspace.Clients
	// channelWorkspaces are the workspaces of the channels seen
	// (workspaces.go).
	channelWorkspaces cache.Map[string, workspace.ID]
	// teamOrgs are the enterprises of the teams seen in an organization.
	teamOrgs cache.Map[string, string]

	running running.Turns // turns that can be stopped, by thread
	// contexts is the agent pane's: the channel each user looks at.
	contexts cache.Map[teamUser, string]
	// slackACL answers what access.May asks of Slack.
	slackACL *access.Slack
	// gaps finds the messages of a thread's unanswered gap this replica
	// was not given (threadgap); connections is Slack's count of the
	// app's Socket Mode connections, from the last hello.
	gaps        *threadgap.Checker
	connections atomic.Int32
	// unsaved holds the messages (channel/ts) the user was told could not
	// be saved, so Slack's redeliveries do not repeat the notice.
	unsavedMu sync.Mutex
	unsaved   map[string]bool
	// work is the threads' durable work: their queues, leases and
	// state (package threadwork).
	work *threadwork.Work
	// turnCtx outlives the event loop at shutdown, so running turns can
	// finish; Bot.cancelTurns stops them after the grace period.
	turnCtx context.Context
	sleep   func(ctx context.Context, d time.Duration) error
	// questions are the tools' questions waiting in this process for
	// their person's answer (Bot.Ask).
	questions questions
}

// self is who the bot is in ctx's workspace: its bot user and bot ids
// there; none (zero) for a workspace it is not installed in.
func (b *core) self(ctx context.Context) workspace.Client {
	if b.clients == nil {
		return workspace.Client{API: b.cfg.API, BotUserID: b.botUserID, BotID: b.botID}
	}
	c, err := workspace.Resolve(ctx, b.clients)
	if err != nil {
		return workspace.Client{}
	}
	return c
}

// state reads the thread state of s (threadwork.Work.State).
func (b *core) state(s *engine.Session) threadstate.State { return b.work.State(&s.Session) }

// setState changes the thread state of s in memory; the engine's next
// save, or saveSession, stores it.
func (b *core) setState(s *engine.Session, change func(*threadstate.State)) {
	b.work.SetState(&s.Session, change)
}

// saveSession stores s (its transcript and state); a failure is logged,
// saying what was not kept, and reported.
func (b *core) saveSession(ctx context.Context, s *engine.Session, what string) bool {
	return b.work.Save(ctx, &s.Session, what)
}

// shared reports whether other replicas may be given this workspace's
// events: the store is shared (Config.SharedStore), or Slack's last
// hello counted more than one Socket Mode connection.
func (b *core) shared() bool { return b.cfg.SharedStore || b.connections.Load() > 1 }
