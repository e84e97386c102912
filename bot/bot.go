package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot/access"
	"agentbot/bot/running"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/storage"
)

// Store is what the bot keeps, as the storage roles it uses: sessions by
// thread (and their working folders and documents), the inbound queue and
// its dedupe marks, leases on threads, channel settings, and the projects
// whose documents threads share. Every
// storage.Backend meets it.
type Store interface {
	storage.Sessions
	storage.Outputs
	storage.Inbound
	storage.Dedupe
	storage.Leases
	storage.Fenced
	storage.Channels
	storage.Projects
}

// Observer is told what the bot does, for metrics. Its methods must be cheap
// and safe for concurrent use.
type Observer interface {
	EventReceived(kind string)
	EventDeduped()
	TurnStarted()
	TurnFinished(d time.Duration, iterations int, prompt, cached, completion, reasoning int, err error)
	Uploaded(err error)
	QueueDepth(n int)
	// ApprovalDecided counts one decision on a call that needed approval
	// (a transcript.Decision constant).
	ApprovalDecided(decision string)
	// Feedback counts one click of an answer's feedback buttons.
	Feedback(agent, workflow, value string)
}

// Config configures a Bot.
type Config struct {
	API    *slack.Client
	Socket *socketmode.Client
	Engine *engine.Engine
	Store  Store
	// Folders are the sessions' working folders, under the store's data
	// folder: shared files are fetched into a session's inputs folder.
	Folders storage.Folders
	// Catalog returns the current catalog; it changes on reload.
	Catalog func() *catalog.Catalog
	// Reload reloads bundles (for /agent reload); nil disables it.
	Reload func() error
	// Admins may run /agent reload and /agent tools, besides workspace
	// admins and owners, and may approve any session's tool calls.
	Admins []string
	// ApprovalTimeout is how long a tool call waits for approval before
	// it is denied (default 15 minutes).
	ApprovalTimeout time.Duration
	// MCPServers are the servers of the MCP configuration, which
	// /agent tools add may give a channel.
	MCPServers []string
	// MaxConcurrentTurns bounds turns running at once over all threads
	// (default 8).
	MaxConcurrentTurns int
	// AllowedUsers and AllowedChannels, when set, limit who may talk to the
	// bot and where.
	AllowedUsers    []string
	AllowedChannels []string
	// MembershipTTL is how long Slack's answers on channel membership,
	// privacy and admin flags are kept (default access.DefaultTTL);
	// member_left_channel and channel_left drop a channel's at once.
	MembershipTTL time.Duration
	// MaxUploadBytes caps files users share that are downloaded into a
	// session (default 10 MiB).
	MaxUploadBytes int64
	// NoStreaming turns off chat.startStream; progress then shows in a
	// status message that is updated.
	NoStreaming bool
	// DedupeTTL is how long event ids are remembered (default 15 minutes).
	DedupeTTL time.Duration
	// ShutdownGrace is how long running turns may take to finish at
	// shutdown before they are cancelled (default 30 s); the engine saves
	// after every iteration, so a cancelled turn resumes after a restart.
	ShutdownGrace time.Duration
	Observer      Observer
	Logger        *slog.Logger
	// ReplicaID names this bot among the replicas sharing the store: it
	// holds thread leases (default: hostname-pid-random).
	ReplicaID string
	// LeaseTTL is how long a thread lease lasts unless renewed (default
	// 15 s; renewed every LeaseTTL/3): after a replica dies, its threads
	// are taken over this long after its last renewal.
	LeaseTTL time.Duration
	// Fences fences the engine's transcript saves (the engine's Store
	// should be it); nil: the bot keeps its own (see Fences).
	Fences *Fences
}

// Bot is agentbot's Slack adapter.
type Bot struct {
	cfg Config
	log *slog.Logger
	obs Observer

	botUserID string
	botID     string
	teamID    string

	connected atomic.Bool
	// stopping is set at shutdown: running turns finish, queued ones wait
	// for the next start.
	stopping atomic.Bool
	quit     chan struct{} // closed when stopping is set
	slashes  sync.WaitGroup
	acks     sync.WaitGroup // admissions waiting to be acked
	running  running.Turns  // turns that can be stopped, by thread
	// paneGreeted and contexts are the agent pane's: who was greeted
	// today, and the channel each user looks at.
	paneGreeted sync.Map
	// homeLocks holds a *sync.Mutex per user, held while that user's Home
	// tab is read and published, so publishes land in the order their
	// reads were made and a stale view never replaces a newer one.
	homeLocks sync.Map
	contexts  sync.Map
	names     sync.Map // user id → display name
	// slackACL answers what access.May asks of Slack (access.go).
	slackACL *access.Slack
	// unsaved holds the messages (channel/ts) the user was told could not
	// be saved, so Slack's redeliveries do not repeat the notice.
	unsavedMu sync.Mutex
	unsaved   map[string]bool
	// admitting counts, per thread key, this replica's admissions not
	// committed yet: the part of a thread's queue the store does not show
	// yet (threadLive).
	admittingMu sync.Mutex
	admitting   map[string]int
	// kept counts, per thread key, the runs in a row whose item stayed
	// queued because the store failed (keptRuns).
	kept    sync.Map
	fences  *Fences
	inbox   *inbox
	threads *threads
	sem     chan struct{}
	// turnCtx outlives the event loop at shutdown, so running turns can
	// finish; cancelTurns stops them after the grace period.
	turnCtx     context.Context
	cancelTurns context.CancelFunc
	sleep       func(ctx context.Context, d time.Duration) error
	stopOnce    sync.Once
}

// New returns a bot for cfg.
func New(cfg Config) (*Bot, error) {
	if cfg.API == nil || cfg.Socket == nil || cfg.Engine == nil || cfg.Store == nil || cfg.Catalog == nil {
		return nil, errors.New("bot: API, Socket, Engine, Store and Catalog are required")
	}
	if cfg.MaxConcurrentTurns <= 0 {
		cfg.MaxConcurrentTurns = 8
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 10 << 20
	}
	if cfg.DedupeTTL < 10*time.Minute {
		cfg.DedupeTTL = 15 * time.Minute
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = defaultApprovalTimeout
	}
	cfg.leaseDefaults()
	b := &Bot{cfg: cfg, log: cfg.Logger, obs: cfg.Observer, inbox: newInbox(), unsaved: map[string]bool{}, admitting: map[string]int{}, sem: make(chan struct{}, cfg.MaxConcurrentTurns), sleep: sleepCtx, quit: make(chan struct{})}
	if b.obs == nil {
		b.obs = nopObserver{}
	}
	if b.fences = cfg.Fences; b.fences == nil {
		b.fences = NewFences(cfg.Store)
	}
	b.turnCtx, b.cancelTurns = context.WithCancel(context.Background())
	b.threads = newThreads(b)
	b.slackACL = access.NewSlack(b.web(), cfg.MembershipTTL)
	return b, nil
}

// Connected reports whether the Socket Mode connection is up.
func (b *Bot) Connected() bool { return b.connected.Load() }

// Run connects and serves until ctx is done. At shutdown it stops taking
// events, lets running turns finish (or checkpoint, after the grace
// period), and returns.
func (b *Bot) Run(ctx context.Context) error {
	auth, err := b.cfg.API.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack auth.test: %w", err)
	}
	b.botUserID, b.botID, b.teamID = auth.UserID, auth.BotID, auth.TeamID
	b.log.Info("connected to slack", "team", auth.Team, "bot_user", auth.UserID)

	sockCtx, stopSock := context.WithCancel(ctx)
	defer stopSock()
	sockDone := make(chan error, 1)
	go func() { sockDone <- b.cfg.Socket.RunContext(sockCtx) }()
	intakeDone := make(chan struct{})
	go func() { defer close(intakeDone); b.intakeLoop(sockCtx) }()

	// Messages persisted before a restart get their turn now.
	if keys, err := b.cfg.Store.PendingKeys(ctx); err != nil {
		b.log.Error("recover pending messages", "err", err)
	} else {
		for _, k := range keys {
			b.threads.wake(k)
		}
		if len(keys) > 0 {
			b.log.Info("resuming queued messages", "threads", len(keys))
		}
	}
	// Threads of replicas that died, items other replicas admitted, and
	// tool calls left undecided too long (periodic.go).
	b.threads.startPeriodic(sockCtx)

loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-sockDone:
			if ctx.Err() == nil {
				b.connected.Store(false)
				stopSock()
				<-intakeDone
				b.acks.Wait()
				b.shutdown()
				return fmt.Errorf("socket mode: %w", err)
			}
			break loop
		case evt, ok := <-b.cfg.Socket.Events:
			if !ok {
				break loop
			}
			b.onSocketEvent(evt)
		}
	}
	b.connected.Store(false)
	stopSock()
	<-intakeDone
	b.acks.Wait()
	b.shutdown()
	return nil
}

// shutdown waits for running turns, up to the grace period, then cancels
// them; their sessions are saved at the last finished iteration.
func (b *Bot) shutdown() {
	b.stopOnce.Do(func() {
		b.stopping.Store(true)
		close(b.quit)
		done := make(chan struct{})
		go func() { b.threads.wait(); b.slashes.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(b.cfg.ShutdownGrace):
			b.log.Warn("shutdown grace period over; cancelling running turns")
			b.cancelTurns()
			<-done
		}
		b.cancelTurns()
	})
}

// onSocketEvent hands an envelope to the intake, which acks it once what
// it carries is persisted (see intake.go).
func (b *Bot) onSocketEvent(evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected, socketmode.EventTypeHello:
		b.connected.Store(true)
		return
	case socketmode.EventTypeConnecting, socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect, socketmode.EventTypeInvalidAuth:
		b.connected.Store(false)
		return
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
		b.obs.EventReceived(string(evt.Type))
		b.inbox.push(evt)
	case socketmode.EventTypeErrorBadMessage:
		// slack-go could not parse the envelope: a payload it cannot
		// decode, or a type it does not know. Slack still wants it acked
		// by its envelope_id, or it delivers it again and again
		// (https://docs.slack.dev/apis/events-api/using-socket-mode):
		// the intake acks it in turn, as every other envelope.
		b.obs.EventReceived(string(evt.Type))
		if req := badEnvelope(evt); req != nil {
			evt.Request = req
			b.inbox.push(evt)
			return
		}
		b.log.Warn("socket mode message without an envelope_id that slack-go could not parse; nothing to ack", "err", badCause(evt))
	case socketmode.EventTypeIncomingError:
		// A frame that is not JSON: it names no envelope to ack.
		if e, ok := evt.Data.(*slack.IncomingEventError); ok {
			b.log.Warn("unreadable socket mode frame; nothing to ack", "err", e.ErrorObj)
		}
	}
}

// badEnvelope is the request of an envelope slack-go could not parse, read
// from its raw JSON: its envelope_id (to ack it) and type; nil when it
// names no envelope_id.
func badEnvelope(evt socketmode.Event) *socketmode.Request {
	bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
	if !ok {
		return nil
	}
	var head struct {
		EnvelopeID string `json:"envelope_id"`
		Type       string `json:"type"`
	}
	if json.Unmarshal(bad.Message, &head) != nil || head.EnvelopeID == "" {
		return nil
	}
	return &socketmode.Request{EnvelopeID: head.EnvelopeID, Type: head.Type}
}

// badCause is why slack-go could not parse an envelope, or nil.
func badCause(evt socketmode.Event) error {
	if bad, ok := evt.Data.(*socketmode.ErrorBadMessage); ok {
		return bad.Cause
	}
	return nil
}

// envelopeType is the type an envelope names (events_api, ...), or the
// socketmode event's type when it names none.
func envelopeType(evt socketmode.Event) string {
	if evt.Request != nil && evt.Request.Type != "" {
		return evt.Request.Type
	}
	return string(evt.Type)
}

// acker returns the ack of an envelope, safe to call more than once.
func (b *Bot) acker(evt socketmode.Event) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			if evt.Request == nil {
				return
			}
			if err := b.cfg.Socket.Ack(*evt.Request); err != nil {
				b.log.Warn("ack failed", "type", evt.Type, "err", err)
			}
		})
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type nopObserver struct{}

func (nopObserver) EventReceived(string)                                       {}
func (nopObserver) EventDeduped()                                              {}
func (nopObserver) TurnStarted()                                               {}
func (nopObserver) TurnFinished(time.Duration, int, int, int, int, int, error) {}
func (nopObserver) Uploaded(error)                                             {}
func (nopObserver) QueueDepth(int)                                             {}
func (nopObserver) ApprovalDecided(string)                                     {}
func (nopObserver) Feedback(string, string, string)                            {}
