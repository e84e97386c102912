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
	"agentbot/bot/lease"
	"agentbot/bot/slackhttp"
	"agentbot/bot/threadgap"
	"agentbot/bot/threadwork"
	"agentbot/bot/workspace"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/retry"
	"agentbot/storage"
)

// Store is what the bot keeps, as the storage roles it uses: sessions by
// thread (and their working folders and documents) and by person, the
// inbound queue and
// its dedupe marks, leases on threads, channel settings, and the projects
// whose documents threads share. Every
// storage.Backend meets it.
type Store interface {
	storage.Sessions
	storage.SessionIndex
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
	// API is the Web API client: with SLACK_BOT_TOKEN, of the one
	// workspace; with Clients, it holds the app-level token alone (Socket
	// Mode).
	API *slack.Client
	// Clients, when set, gives each workspace agentbot is installed in
	// its own client (package workspace): every event, command and click
	// is answered with its workspace's token. nil: API answers all.
	Clients workspace.Clients
	// Socket is Slack's Socket Mode connection; nil in HTTP mode, where
	// Slack's requests arrive at the request URL SlackHandler serves.
	Socket *socketmode.Client
	// SigningSecret verifies the requests of HTTP mode (Slack's app
	// signing secret); required when Socket is nil.
	SigningSecret string
	Engine        *engine.Engine
	Store         Store
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
	// Connections are the stored MCP connections /agent connections lists
	// and /agent disconnect ends; nil: those commands say they are not
	// enabled here.
	Connections Connections
	// Linker makes the links people connect their accounts at MCP
	// servers with (a call waiting on a connection, /agent connect); nil:
	// connecting is not enabled here.
	Linker Linker
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
	// SoleReplica says no other replica works this store's threads: a
	// bbolt store, which one process holds. Its thread leases then never
	// lapse, so a process short of CPU keeps its threads (a renewal that
	// comes late gives nothing up); several replicas need it false.
	SoleReplica bool
	// Fences fences the engine's transcript saves (the engine's Store
	// should be it); nil: the bot keeps its own (see Fences).
	Fences *Fences
	// SharedStore says other replicas may share the store (PostgreSQL):
	// Slack may give any of them a thread's message, so before a message
	// is answered the thread's earlier messages are read from Slack
	// (package threadgap). So they are when Slack's Socket Mode hello
	// counts more than one connection.
	SharedStore bool
}

// Fences are the fences of the threads this process works (lease.Fences):
// wire one store into the engine and the bot (Config.Fences).
type Fences = lease.Fences

// FencedStore is a store that can save under a fence (lease.FencedStore).
type FencedStore = lease.FencedStore

// NewFences returns the fences of a process over st.
func NewFences(st FencedStore) *Fences { return lease.NewFences(st) }

// leaseDefaults fills in ReplicaID and LeaseTTL.
func (c *Config) leaseDefaults() {
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = lease.DefaultTTL
	}
	if c.ReplicaID == "" {
		c.ReplicaID = lease.NewReplicaID()
	}
}

// ReplicaID is this bot's name among the replicas sharing the store.
func (b *Bot) ReplicaID() string { return b.c.cfg.ReplicaID }

// Bot is agentbot's Slack adapter: it connects, hands each Socket Mode
// envelope to the intake, and at shutdown lets running turns finish.
//
// Its parts: the intake maps Slack's events and clicks to typed items and
// admits them into their thread's durable queue (package threadwork),
// which hands each to threadHandlers, one handler per kind; turns runs a
// turn and renders it; home is the Home tab and the agent pane, slash is
// /agent. What they share is core: the configuration, the Slack writer,
// access and the thread state.
type Bot struct {
	c  *core
	in *intake

	connected atomic.Bool
	// replays are the requests of HTTP mode taken lately (SlackHandler).
	replays slackhttp.Replays
	// cancelTurns stops running turns after the grace period.
	cancelTurns context.CancelFunc
	stopOnce    sync.Once
}

// check reports what cfg lacks that New requires.
func (c *Config) check() error {
	if c.API == nil || c.Engine == nil || c.Store == nil || c.Catalog == nil {
		return errors.New("bot: API, Engine, Store and Catalog are required")
	}
	if c.Socket == nil && c.SigningSecret == "" {
		return errors.New("bot: Socket (Socket Mode) or SigningSecret (HTTP mode) is required")
	}
	if c.Folders.Dir == "" {
		return errors.New("bot: Folders is required (the data folder the sessions' working folders are under)")
	}
	return nil
}

// New returns a bot for cfg.
func New(cfg Config) (*Bot, error) {
	if err := cfg.check(); err != nil {
		return nil, err
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
	c := &core{cfg: cfg, log: cfg.Logger, obs: cfg.Observer, unsaved: map[string]bool{}, sleep: retry.Sleep, clients: cfg.Clients}
	if c.obs == nil {
		c.obs = nopObserver{}
	}
	fences := cfg.Fences
	if fences == nil {
		fences = NewFences(cfg.Store)
	}
	b := &Bot{c: c}
	c.turnCtx, b.cancelTurns = context.WithCancel(context.Background())
	c.slackACL = access.NewSlack(c.web(), cfg.MembershipTTL)
	c.gaps = threadgap.New(threadgap.Config{Slack: c.web(), Log: c.log, Shared: c.shared})
	c.work = threadwork.New(c.turnCtx, threadwork.Config{Store: cfg.Store, Fences: fences,
		Replica: cfg.ReplicaID, LeaseTTL: cfg.LeaseTTL, Sole: cfg.SoleReplica, DedupeTTL: cfg.DedupeTTL, Observer: c.obs, Log: c.log})
	hm := &home{core: c}
	tu := &turns{core: c, home: hm, sem: make(chan struct{}, cfg.MaxConcurrentTurns)}
	c.work.SetHandler(queued{&threadHandlers{core: c, turns: tu}})
	b.in = &intake{core: c, inbox: newInbox(), slash: &slash{core: c}, home: hm}
	return b, nil
}

// Connected reports whether the Socket Mode connection is up; in HTTP
// mode, whether the bot takes requests (Run has started and not ended).
func (b *Bot) Connected() bool { return b.connected.Load() }

// HTTPMode reports whether Slack's requests come to SlackHandler (no
// Socket Mode connection).
func (b *Bot) HTTPMode() bool { return b.c.cfg.Socket == nil }

// Run connects and serves until ctx is done. At shutdown it stops taking
// events, lets running turns finish (or checkpoint, after the grace
// period), and returns.
func (b *Bot) Run(ctx context.Context) error {
	if err := b.whoAmI(ctx); err != nil {
		return err
	}

	sockCtx, stopSock := context.WithCancel(ctx)
	defer stopSock()
	sockDone := make(chan error, 1)
	if b.HTTPMode() {
		b.connected.Store(true) // SlackHandler takes requests from now on
	} else {
		go func() { sockDone <- b.c.cfg.Socket.RunContext(sockCtx) }()
	}
	intakeDone := make(chan struct{})
	go func() { defer close(intakeDone); b.in.intakeLoop(sockCtx) }()

	// Messages persisted before a restart get their turn now.
	b.c.work.Resume()
	// Tool calls left undecided too long are expired at every tick, the
	// first at start, so calls that timed out while no bot ran are expired
	// too; threads of replicas that died, and items other replicas
	// admitted, are found by the work's scan.
	sw := &sweeper{core: b.c, queued: map[string]bool{}}
	b.c.work.StartPeriodic(sockCtx, b.c.approvalSweepEvery(), sw.sweep)

	var err error
	if b.HTTPMode() {
		<-ctx.Done()
	} else {
		err = b.serveSocket(ctx, sockDone)
	}
	b.connected.Store(false)
	stopSock()
	<-intakeDone
	b.c.work.WaitAdmissions()
	b.shutdown()
	return err
}

// whoAmI learns who the bot is in its one workspace (auth.test) when it
// has a single token; with Config.Clients each workspace's installation
// says it.
func (b *Bot) whoAmI(ctx context.Context) error {
	if b.c.clients != nil {
		b.c.log.Info("serving the workspaces agentbot is installed in")
		return nil
	}
	auth, err := b.c.cfg.API.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack auth.test: %w", err)
	}
	b.c.botUserID, b.c.botID, b.c.teamID = auth.UserID, auth.BotID, auth.TeamID
	b.c.log.Info("connected to slack", "team", auth.Team, "bot_user", auth.UserID)
	return nil
}

// serveSocket hands the Socket Mode events to the intake until ctx ends
// (nil), or the connection ends for good: Slack refused it (a wrong
// app-level token: at once for invalid_auth, after maxRefusedConnects
// refusals in a row otherwise) or it failed, which is returned with what
// to do.
func (b *Bot) serveSocket(ctx context.Context, sockDone <-chan error) error {
	w := &connectWatch{log: b.c.log}
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-sockDone:
			if ctx.Err() != nil {
				return nil
			}
			return socketError(err)
		case evt, ok := <-b.c.cfg.Socket.Events:
			if !ok {
				return nil
			}
			if err := w.watch(evt); err != nil {
				return err
			}
			b.onSocketEvent(evt)
		}
	}
}

// shutdown waits for running turns, up to the grace period, then cancels
// them; their sessions are saved at the last finished iteration.
func (b *Bot) shutdown() {
	b.stopOnce.Do(func() {
		b.c.work.Stop()
		done := make(chan struct{})
		go func() { b.c.work.Wait(); b.in.slashes.Wait(); b.in.home.views.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(b.c.cfg.ShutdownGrace):
			b.c.log.Warn("shutdown grace period over; cancelling running turns")
			b.cancelTurns()
			<-done
		}
		b.cancelTurns()
	})
}

// onSocketEvent hands an envelope to the intake, which acks it once what
// it carries is persisted.
func (b *Bot) onSocketEvent(evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected, socketmode.EventTypeHello:
		b.connected.Store(true)
		if evt.Type == socketmode.EventTypeHello && evt.Request != nil {
			// Slack's count of the app's connections: over one, other
			// replicas may be given a thread's messages (threadgap).
			b.c.connections.Store(int32(evt.Request.NumConnections))
		}
		return
	case socketmode.EventTypeConnecting, socketmode.EventTypeConnectionError, socketmode.EventTypeDisconnect, socketmode.EventTypeInvalidAuth:
		b.connected.Store(false)
		return
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
		b.c.obs.EventReceived(string(evt.Type))
		b.in.inbox.push(evt)
	case socketmode.EventTypeErrorBadMessage:
		// slack-go could not parse the envelope: a payload it cannot
		// decode, or a type it does not know. Slack still wants it acked
		// by its envelope_id, or it delivers it again and again
		// (https://docs.slack.dev/apis/events-api/using-socket-mode):
		// the intake acks it in turn, as every other envelope.
		b.c.obs.EventReceived(string(evt.Type))
		if req := badEnvelope(evt); req != nil {
			evt.Request = req
			b.in.inbox.push(evt)
			return
		}
		b.c.log.Warn("socket mode message without an envelope_id that slack-go could not parse; nothing to ack", "err", badCause(evt))
	case socketmode.EventTypeIncomingError:
		// A frame that is not JSON: it names no envelope to ack.
		if e, ok := evt.Data.(*slack.IncomingEventError); ok {
			b.c.log.Warn("unreadable socket mode frame; nothing to ack", "err", e.ErrorObj)
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

type nopObserver struct{}

func (nopObserver) EventReceived(string)                                       {}
func (nopObserver) EventDeduped()                                              {}
func (nopObserver) TurnStarted()                                               {}
func (nopObserver) TurnFinished(time.Duration, int, int, int, int, int, error) {}
func (nopObserver) Uploaded(error)                                             {}
func (nopObserver) QueueDepth(int)                                             {}
func (nopObserver) ApprovalDecided(string)                                     {}
func (nopObserver) Feedback(string, string, string)                            {}
