package bot

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"agentbot/bot/access"
	"agentbot/bot/running"
	"agentbot/bot/threadwork"
)

// core is what every part of the bot shares: its configuration, who it is
// in Slack, the Slack writer (post.go, blocks.go, upload.go), who may do
// what (access.go), the turns that can be stopped, and the threads'
// durable work with their state (threadstate.go).
type core struct {
	cfg Config
	log *slog.Logger
	obs Observer

	botUserID string
	botID     string
	teamID    string

	running running.Turns // turns that can be stopped, by thread
	// contexts is the agent pane's: the channel each user looks at.
	contexts sync.Map
	names    sync.Map // user id → display name
	// slackACL answers what access.May asks of Slack (access.go).
	slackACL *access.Slack
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
}
