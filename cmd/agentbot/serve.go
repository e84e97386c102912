package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot"
	"agentbot/bot/metrics"
	"agentbot/cmd/agentbot/admin"
	"agentbot/cmd/agentbot/catalogs"
	"agentbot/cmd/agentbot/check"
	"agentbot/cmd/agentbot/datadir"
	"agentbot/cmd/agentbot/httpserve"
	"agentbot/cmd/agentbot/installs"
	"agentbot/cmd/agentbot/mcptools"
	"agentbot/cmd/agentbot/signals"
	"agentbot/cmd/agentbot/stores"
	"agentbot/engine/catalog"
	"agentbot/engine/mcp"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// runServe runs the Slack bot until SIGINT or SIGTERM: its settings
// checked, then each step of its wiring in order, then the bot.
func runServe(ctx context.Context, e *env) int {
	cfg, _, code := parse("serve", e, nil)
	if cfg == nil {
		return code
	}
	if code := checkSecrets(cfg, e); code != 0 {
		return code
	}
	s := &server{cfg: cfg, e: e, log: newLogger(cfg, e.stderr)}
	defer s.close()
	datadir.WarnLegacy(s.log, cfg.DataDir, cfg.LegacyData, envOf(e.getenv))
	for _, step := range []func(context.Context) int{
		s.openStore,   // the store, and the control socket other commands reach it by
		s.loadAgents,  // the catalog, reloadable
		s.loadTools,   // the MCP servers
		s.newBot,      // the model, the engine and the Slack bot
		s.background,  // SIGHUP reloads, retention
		s.serveHTTP,   // /healthz and /metrics
		s.servePublic, // the public side: OAuth redirects, the client ID metadata document, Slack's request URL
	} {
		if code := step(ctx); code != 0 {
			return code
		}
	}
	return s.run(ctx)
}

// checkSecrets lists every missing or placeholder secret at once, one line
// each, and returns 2 when there is one.
func checkSecrets(cfg *Config, e *env) int {
	c := checkConfig(cfg)
	err := errors.Join(check.Tokens(c), check.APIKey(c))
	if err == nil {
		return 0
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(e.stderr, "agentbot serve: %s\n", line)
	}
	return 2
}

// server is one run of serve: what its steps make, and what undoes them,
// in reverse order, when it ends.
type server struct {
	cfg   *Config
	e     *env
	log   *slog.Logger
	st    storage.Backend
	cats  *catalogs.Reloadable
	tools *mcptools.Tools
	// auth authorizes the MCP servers with identity user or service, its
	// credentials sealed in the store (zero: there are none).
	auth     mcptools.Auth
	installs *installs.Installs // nil: one SLACK_BOT_TOKEN
	met      *metrics.Metrics
	b        *bot.Bot
	undo     []func()
}

// fail prints err as serve's and returns code.
func (s *server) fail(code int, err error) int {
	fmt.Fprintf(s.e.stderr, "agentbot serve: %v\n", err)
	return code
}

// close undoes the steps, the last first.
func (s *server) close() {
	for i := len(s.undo) - 1; i >= 0; i-- {
		s.undo[i]()
	}
}

// openStore opens the store and serves the control socket.
func (s *server) openStore(ctx context.Context) int {
	st, err := storeOf(s.cfg).Open(ctx)
	if err != nil {
		code := s.fail(stores.ExitCode(err), err)
		if hint := storeOf(s.cfg).LockedHint(err); hint != "" {
			fmt.Fprintf(s.e.stderr, "agentbot serve: %s\n", hint)
		}
		return code
	}
	s.st = st
	s.undo = append(s.undo, func() { st.Close() }, stores.ServeControl(ctx, st, s.log))
	return 0
}

// loadAgents loads the catalog; serve needs at least one agent.
func (s *server) loadAgents(context.Context) int {
	cfg, log := s.cfg, s.log
	s.cats = catalogs.NewReloadable(func() *catalog.Catalog { return loadCatalog(cfg) }, log)
	first := s.cats.Get()
	if len(first.Agents) == 0 {
		fmt.Fprintln(s.e.stderr, "agentbot serve: no agent to serve")
		explainCatalog(s.e.stderr, cfg, first)
		return 1
	}
	for _, p := range first.Problems {
		log.Warn("bundle problem", "path", p.Path, "reason", p.Reason)
	}
	return 0
}

// loadTools starts the MCP servers, those with identity user or service
// authorized through the credentials in the store (connectMCP).
func (s *server) loadTools(context.Context) int {
	mc, err := mcptools.Read(s.cfg.MCPConfig, s.e.getenv, s.log)
	if err != nil {
		return s.fail(2, err)
	}
	opts := mcp.Options{Logger: s.log}
	if code := s.connectMCP(mc); code != 0 {
		return code
	}
	if s.auth.Connector != nil {
		opts.Authorizer = s.auth.Connector
	}
	tools := mcptools.New(mc, opts)
	s.tools = tools
	s.undo = append(s.undo, func() { tools.Close() }) // stops the stdio servers
	tools.WarnAgents(s.cats.Get(), s.log)
	tools.UseChannels(s.st, s.log)
	return 0
}

// connectMCP makes the store-backed authorizer of the HTTP servers with
// identity user or service (mcptools.Authorization); a config it refuses
// stops serve with exit code 2.
func (s *server) connectMCP(mc *mcp.Config) int {
	a, err := mcptools.Authorization(mc, mcptools.AuthSettings{PublicURL: s.cfg.PublicURL, Listen: s.cfg.Listen},
		s.st, s.e.getenv, s.log)
	var refused *mcptools.RefusedError
	switch {
	case errors.As(err, &refused):
		return s.fail(2, err)
	case err != nil:
		return s.fail(1, err)
	}
	s.auth = a
	return 0
}

// newBot wires the model, the engine and the Slack bot.
func (s *server) newBot(context.Context) int {
	cfg, log, st, cats, tools := s.cfg, s.log, s.st, s.cats, s.tools
	met := metrics.New()
	s.met = met
	m, err := newModel(cfg, log, func(attempt int, err error) {
		met.ModelRetry()
		log.Info("model retry", "attempt", attempt, "err", err)
	})
	if err != nil {
		return s.fail(2, err)
	}
	tools.AskIn(func() *bot.Bot { return s.b })
	fences := bot.NewFences(st) // the engine's saves of a thread are fenced by its lease
	eng := newEngine(cfg, fencedSaves{st, fences}, m, cats.Get, newBudgets(cfg, st), log, met.ToolRecord, tools)

	opts := []slack.Option{slack.OptionAppLevelToken(cfg.SlackAppToken),
		slack.OptionHTTPClient(&http.Client{Transport: pooledTransport(cfg.MaxTurns)})}
	if cfg.SlackAPIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.SlackAPIURL))
	}
	if s.installs, err = installs.Setup(installs.Settings{ClientID: cfg.SlackClientID, ClientSecret: cfg.SlackClientSecret,
		PublicURL: cfg.PublicURL, APIURL: cfg.SlackAPIURL}, st, s.e.getenv, log); err != nil {
		return s.fail(2, err)
	}
	api := slack.New(cfg.SlackBotToken, opts...) // with installations, the app-level token alone
	var sock *socketmode.Client
	secret := ""
	if check.HTTPMode(checkConfig(cfg)) {
		secret = cfg.SlackSigningSecret // Slack's requests come to /slack/events (servePublic)
	} else {
		sock = socketmode.New(api)
	}
	b, err := bot.New(bot.Config{
		API: api, Socket: sock, SigningSecret: secret, Engine: eng, Store: st, Clients: s.installs.BotClients(),
		Catalog: cats.Get, Reload: cats.Reload, Admins: cfg.Admins,
		MaxConcurrentTurns: cfg.MaxTurns, AllowedUsers: cfg.AllowedUsers, AllowedChannels: cfg.AllowedChannels,
		MaxUploadBytes: cfg.MaxUploadBytes, NoStreaming: cfg.NoStreaming, Logger: log, Observer: met,
		ReplicaID: cfg.ReplicaID, LeaseTTL: cfg.LeaseTTL, SoleReplica: storeOf(cfg).Sole(), ApprovalTimeout: cfg.ApprovalTimeout,
		MCPServers: tools.Names(), Fences: fences, Folders: storage.Folders{Dir: cfg.DataDir},
		Connections: s.connections(), Linker: s.auth.Linker(tools.Config()), SharedStore: cfg.DatabaseURL != "",
	})
	if err != nil {
		return s.fail(1, err)
	}
	s.b = b
	s.auth.Resume(b)
	return 0
}

// connections is what /agent connections and disconnect act on: the
// vault's, or none without OAuth servers.
func (s *server) connections() bot.Connections {
	if s.auth.Vault == nil {
		return nil
	}
	return admin.VaultConnections{Vault: s.auth.Vault}
}

// background starts serve's goroutines: SIGHUP reloads bundles without a
// restart, and retention prunes old sessions. Each stops when serve ends,
// and serve waits for them.
func (s *server) background(ctx context.Context) int {
	s.undo = append(s.undo, signals.OnHangup(ctx, func() {
		if err := s.cats.Reload(); err != nil {
			s.log.Error("reload", "err", err)
		}
	}))
	if s.cfg.SessionTTL > 0 {
		bgCtx, stopBg := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); admin.Retention(bgCtx, s.st, s.cfg.SessionTTL, s.log) }()
		s.undo = append(s.undo, func() { stopBg(); <-done })
	}
	return 0
}

// serveHTTP serves /healthz and /metrics when AGENTBOT_HTTP_ADDR is set.
func (s *server) serveHTTP(context.Context) int {
	if s.cfg.HTTPAddr == "" {
		return 0
	}
	health := func(ctx context.Context) error {
		if !s.b.Connected() {
			if s.b.HTTPMode() {
				return errors.New("not taking Slack's requests yet")
			}
			return errors.New("socket mode connection is down")
		}
		if err := s.st.Ping(ctx); err != nil {
			return fmt.Errorf("%s store: %w", storeOf(s.cfg).Name(), err)
		}
		return s.installs.Health(ctx)
	}
	srv, err := httpserve.Listen("AGENTBOT_HTTP_ADDR", s.cfg.HTTPAddr, s.met.Handler(health))
	if err != nil {
		return s.fail(1, err)
	}
	s.undo = append(s.undo, srv.Stop)
	s.log.Info("serving /healthz and /metrics", "addr", srv.Addr)
	return 0
}

// servePublic serves the public side on AGENTBOT_LISTEN when
// AGENTBOT_PUBLIC_URL is set: the OAuth redirect and the client ID
// metadata document of MCP authorization (connect.Connector.Handler), and
// in HTTP mode Slack's request URL, /slack/events (bot.SlackHandler).
func (s *server) servePublic(context.Context) int {
	if s.cfg.PublicURL == "" {
		return 0
	}
	mux := http.NewServeMux()
	if s.auth.Connector != nil {
		mux.Handle("/oauth/", s.auth.Connector.Handler())
	}
	if s.b.HTTPMode() {
		mux.Handle("/slack/events", s.b.SlackHandler())
		s.log.Info("taking Slack's requests over HTTP", "request_url", check.RequestURL(checkConfig(s.cfg)))
	}
	s.installs.Mount(mux) // /slack/install and /slack/oauth_redirect
	srv, err := httpserve.Listen("AGENTBOT_LISTEN", s.cfg.Listen, mux)
	if err != nil {
		return s.fail(1, err)
	}
	s.undo = append(s.undo, srv.Stop)
	s.log.Info("serving the public side", "addr", srv.Addr, "public_url", s.cfg.PublicURL)
	return 0
}

// run runs the bot until ctx ends.
func (s *server) run(ctx context.Context) int {
	s.log.Info("agentbot starting", "agents", len(s.cats.Get().Agents), "store", storeOf(s.cfg).Name(), "data", s.cfg.DataDir, "model", s.cfg.Model, "replica", s.b.ReplicaID())
	if err := s.b.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return s.fail(1, err)
	}
	s.log.Info("agentbot stopped")
	return 0
}

// fencedSaves is the engine's store in serve: its session saves go
// through the bot's fences (bot.Fences).
type fencedSaves struct {
	engineStore
	fences *bot.Fences
}

func (s fencedSaves) SaveSession(ctx context.Context, x *transcript.Session) error {
	return s.fences.SaveSession(ctx, x)
}
