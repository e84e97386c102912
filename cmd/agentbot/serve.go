package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"agentbot/bot"
	"agentbot/bot/metrics"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// catalogs holds the current catalog; a reload swaps it. Running sessions
// keep the agent definition they started with (it is in the session).
type catalogs struct {
	cur  atomic.Pointer[catalog.Catalog]
	load func() *catalog.Catalog
	log  *slog.Logger
}

func (c *catalogs) get() *catalog.Catalog { return c.cur.Load() }

func (c *catalogs) reload() error {
	next := c.load()
	if len(next.Agents) == 0 {
		return fmt.Errorf("no agent could be loaded (%d problems); keeping the agents already loaded", len(next.Problems))
	}
	c.cur.Store(next)
	c.log.Info("agents reloaded", "agents", len(next.Agents), "problems", len(next.Problems))
	for _, p := range next.Problems {
		c.log.Warn("bundle problem", "path", p.Path, "reason", p.Reason)
	}
	return nil
}

// runServe runs the Slack bot until SIGINT or SIGTERM.
func runServe(ctx context.Context, e *env) int {
	cfg, _, code := parse("serve", e, nil)
	if cfg == nil {
		return code
	}
	if err := checkTokens(cfg); err != nil {
		fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
		return 2
	}
	if err := needKey(cfg); err != nil {
		fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
		return 2
	}
	log := newLogger(cfg, e.stderr)
	st, err := openStore(ctx, cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
		return storeExitCode(err)
	}
	defer st.Close()
	if local, ok := st.(*bolt.Store); ok {
		if stopControl, err := local.ServeControl(ctx); err != nil {
			log.Warn("control socket: backup and sessions will not reach this process", "err", err)
		} else {
			defer stopControl()
		}
	}

	cats := &catalogs{load: func() *catalog.Catalog { return loadCatalog(cfg) }, log: log}
	cats.cur.Store(cats.load())
	first := cats.get()
	if len(first.Agents) == 0 {
		fmt.Fprintf(e.stderr, "agentbot serve: no agent could be loaded from %v %v (agentbot agents shows why)\n", cfg.Bundles, cfg.BMADRoots)
		return 1
	}
	for _, p := range first.Problems {
		log.Warn("bundle problem", "path", p.Path, "reason", p.Reason)
	}

	tools, err := loadMCP(cfg, e.getenv, log)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
		return 2
	}
	defer tools.Close() // stops the stdio servers
	tools.warnAgents(first, log)
	tools.useChannels(st, log)

	met := metrics.New()
	m, err := newModel(cfg, log, func(attempt int, err error) {
		met.ModelRetry()
		log.Info("model retry", "attempt", attempt, "err", err)
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
		return 2
	}
	fences := bot.NewFences(st) // the engine's saves of a thread are fenced by its lease
	eng := newEngine(cfg, fencedSaves{st, fences}, m, cats.get, newBudgets(cfg, st), log, met.ToolRecord, tools)

	opts := []slack.Option{slack.OptionAppLevelToken(cfg.SlackAppToken),
		slack.OptionHTTPClient(&http.Client{Transport: pooledTransport(cfg.MaxTurns)})}
	if cfg.SlackAPIURL != "" {
		opts = append(opts, slack.OptionAPIURL(cfg.SlackAPIURL))
	}
	api := slack.New(cfg.SlackBotToken, opts...)
	b, err := bot.New(bot.Config{
		API: api, Socket: socketmode.New(api), Engine: eng, Store: st,
		Catalog: cats.get, Reload: cats.reload, Admins: cfg.Admins,
		MaxConcurrentTurns: cfg.MaxTurns, AllowedUsers: cfg.AllowedUsers, AllowedChannels: cfg.AllowedChannels,
		MaxUploadBytes: cfg.MaxUploadBytes, NoStreaming: cfg.NoStreaming, Logger: log, Observer: met,
		ReplicaID: cfg.ReplicaID, LeaseTTL: cfg.LeaseTTL, ApprovalTimeout: cfg.ApprovalTimeout,
		MCPServers: tools.names(), Fences: fences,
	})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
		return 1
	}

	// serve owns its goroutines: each stops when bgCtx ends, and serve
	// waits for them on every return path.
	bgCtx, stopBg := context.WithCancel(ctx)
	var bg sync.WaitGroup
	defer func() { stopBg(); bg.Wait() }()

	// SIGHUP reloads bundles without a restart.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-bgCtx.Done():
				return
			case <-hup:
				if err := cats.reload(); err != nil {
					log.Error("reload", "err", err)
				}
			}
		}
	}()
	if cfg.SessionTTL > 0 {
		bg.Add(1)
		go func() { defer bg.Done(); retention(bgCtx, st, cfg.SessionTTL, log) }()
	}

	if cfg.HTTPAddr != "" {
		health := func() error {
			if !b.Connected() {
				return errors.New("socket mode connection is down")
			}
			if err := st.Ping(); err != nil {
				return fmt.Errorf("%s store: %w", storeName(cfg), err)
			}
			return nil
		}
		srv, addr, served, err := listenHTTP(cfg.HTTPAddr, met.Handler(health))
		if err != nil {
			fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
			return 1
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(sctx); err != nil {
				srv.Close()
			}
			<-served
		}()
		log.Info("serving /healthz and /metrics", "addr", addr)
	}

	log.Info("agentbot starting", "agents", len(first.Agents), "store", storeName(cfg), "data", cfg.DataDir, "model", cfg.Model, "replica", b.ReplicaID())
	if err := b.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(e.stderr, "agentbot serve: %v\n", err)
		return 1
	}
	log.Info("agentbot stopped")
	return 0
}

// retention removes sessions inactive longer than ttl, now and every hour.
func retention(ctx context.Context, st storage.Retention, ttl time.Duration, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		ids, err := st.Prune(time.Now().Add(-ttl))
		if err != nil {
			log.Error("prune sessions", "err", err)
		} else if len(ids) > 0 {
			log.Info("pruned inactive sessions", "count", len(ids), "ttl", ttl)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// listenHTTP serves h on addr in the background and returns the bound
// address (addr may use port 0); served is closed when Serve returns.
func listenHTTP(addr string, h http.Handler) (srv *http.Server, bound string, served <-chan struct{}, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", nil, fmt.Errorf("listen on AGENTBOT_HTTP_ADDR %s: %w", addr, err)
	}
	srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	return srv, ln.Addr().String(), done, nil
}

// fencedSaves is the engine's store in serve: its session saves go
// through the bot's fences (bot.Fences).
type fencedSaves struct {
	engineStore
	fences *bot.Fences
}

func (s fencedSaves) SaveSession(x *transcript.Session) error { return s.fences.SaveSession(x) }
