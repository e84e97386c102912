package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"agentbot/cmd/agentbot/catalogs"
	"agentbot/cmd/agentbot/flagargs"
	"agentbot/cmd/agentbot/mcptools"
	"agentbot/cmd/agentbot/stores"
	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// parse parses a command's flags, then the environment; extra registers
// the command's own flags. The command takes the settings of its groups
// (commands, main.go) and no other. A setting that does not parse or is out
// of range prints an error naming it, its value and the expected form (one
// line per bad setting) and returns exit code 2; -h prints the command's
// usage and flags to stdout and returns a nil Config with exit code 0.
func parse(name string, e *env, extra func(*flagSet)) (*Config, []string, int) {
	cmd, _ := findCommand(name)
	fs, cfg, fill := newFlags(name, cmd.groups, e.getenv)
	var usage bytes.Buffer // -h prints it; a parse error prints one line
	fs.SetOutput(&usage)
	if extra != nil {
		extra(&flagSet{fs})
	}
	args, err := flagargs.Parse(fs, e.args)
	if errors.Is(err, flag.ErrHelp) {
		usage.Reset()
		printHelp(e.stdout, cmd, fs)
		return nil, nil, 0
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot %s: %s\n(agentbot %s -h lists its flags)\n", name, describeFlagError(err), name)
		return nil, nil, 2
	}
	if err := fill(); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(e.stderr, "agentbot %s: %s\n", name, line)
		}
		return nil, nil, 2
	}
	return cfg, args, 0
}

// printHelp prints a command's -h: its synopsis, summary and flags.
func printHelp(w io.Writer, cmd command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: agentbot %s", cmd.name)
	if cmd.usage != "" {
		fmt.Fprintf(w, " %s", cmd.usage)
	}
	fmt.Fprintf(w, "\n\n%s.\n", strings.ToUpper(cmd.summary[:1])+cmd.summary[1:])
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nFlags (a flag wins over the environment variable in [$...]):")
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// loadCatalog loads every agent the configuration names (catalogs.Load).
func loadCatalog(cfg *Config) *catalog.Catalog {
	return catalogs.Load(sources(cfg), cfg.DataDir)
}

// sources are where cfg's agents come from.
func sources(cfg *Config) catalogs.Sources {
	return catalogs.Sources{Bundles: cfg.Bundles, BMADRoots: cfg.BMADRoots, Skills: cfg.Skills}
}

// newModel returns the model client the configuration describes; log
// hears of an API switch (nil: slog's default).
func newModel(cfg *Config, log *slog.Logger, onRetry func(int, error)) (*model.Client, error) {
	mc := model.Config{
		APIKey:     cfg.APIKey,
		BaseURL:    cfg.BaseURL,
		Model:      cfg.Model,
		APIType:    cfg.APIType,
		APIVersion: cfg.APIVersion,
		MaxTokens:  cfg.MaxTokens,
		API:        strings.ToLower(cfg.API),
		Family:     cfg.ModelFamily,
		// The validated value, lower-cased like the check compares it.
		ReasoningEffort: strings.ToLower(cfg.ReasoningEffort),
		CallTimeout:     cfg.CallTimeout,
		OnRetry:         onRetry,
		Logger:          log,
		HTTPClient:      &http.Client{Transport: pooledTransport(cfg.MaxTurns)},
	}
	if t := strings.TrimSpace(cfg.Temperature); t != "" {
		f, err := strconv.ParseFloat(t, 32)
		if err != nil {
			return nil, fmt.Errorf("temperature %q: %w", t, err)
		}
		f32 := float32(f)
		mc.Temperature = &f32
	}
	return model.New(mc), nil
}

// pooledTransport is the HTTP transport of the model client and of serve's
// Slack client: it keeps an idle connection per turn that may run at once
// (at least 2), so concurrent turns reuse connections instead of opening
// (and TLS handshaking) one per call past Go's default of 2 idle per host.
func pooledTransport(turns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(turns, 2)
	t.MaxIdleConns = max(t.MaxIdleConns, 2*t.MaxIdleConnsPerHost)
	return t
}

// newBudgets returns the token caps the configuration sets, with daily
// usage kept in the store.
func newBudgets(cfg *Config, st storage.Usage) *engine.Budgets {
	admins := make([]string, len(cfg.Admins))
	for i, a := range cfg.Admins {
		admins[i] = "<@" + a + ">" // a Slack mention; the terminal shows it as is
	}
	return &engine.Budgets{SessionTokens: cfg.SessionTokenBudget, DailyTokens: cfg.DailyTokenBudget, Admins: admins, Store: st}
}

// engineStore is what the engine keeps in the store: sessions and
// documents.
type engineStore interface {
	engine.Store
	storage.Outputs
	storage.Projects
}

// newEngine wires an engine to the store and the model.
func newEngine(cfg *Config, st engineStore, m engine.Model, cat func() *catalog.Catalog, budgets *engine.Budgets, log *slog.Logger, onTool func(transcript.ToolRecord), tools *mcptools.Tools) *engine.Engine {
	return engine.New(engine.Config{
		Budgets:       budgets,
		Model:         m,
		Catalog:       cat,
		Store:         st,
		Outputs:       st,
		OutputRoot:    func(id string) string { d, _ := storage.Folders{Dir: cfg.DataDir}.Session("outputs", id); return d },
		InputRoot:     func(id string) string { d, _ := storage.Folders{Dir: cfg.DataDir}.Session("inputs", id); return d },
		Projects:      newProjects(cfg, st),
		CoreRoot:      cfg.CoreRoot,
		Hidden:        []string{cfg.DataDir},
		Deny:          cfg.Deny,
		MaxIterations: cfg.MaxIterations,
		TurnTimeout:   cfg.TurnTimeout,
		MaxRead:       cfg.MaxFileBytes,
		MaxWrite:      cfg.MaxFileBytes,
		ContextBudget: cfg.ContextBudget,
		Logger:        log,
		OnToolRecord:  onTool,
		ExternalTools: tools.External(),
		Ask:           tools.AskHook(),
	})
}

// newLogger returns the slog logger the configuration asks for. The
// settings have checked the level and the format (see checks); an empty
// level is info, an empty format text.
func newLogger(cfg *Config, w io.Writer) *slog.Logger {
	var lvl slog.Level // info
	if cfg.LogLevel != "" {
		_ = lvl.UnmarshalText([]byte(cfg.LogLevel)) // checked: debug, info, warn or error
	}
	opts := &slog.HandlerOptions{Level: lvl}
	if strings.EqualFold(cfg.LogFormat, "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// newProjects wires shared documents: a Slack thread is in its channel's
// project (or the project the channel is bound to), a terminal session in
// cfg.Project or the data folder's terminal project.
func newProjects(cfg *Config, st storage.Projects) *engine.Projects {
	terminal := cfg.Project
	if terminal == "" {
		terminal = storage.TerminalProject
	}
	return &engine.Projects{
		Store: st,
		Of: func(ctx context.Context, key string) (string, error) {
			return storage.ThreadProject(ctx, st, key, terminal)
		},
		Root: storage.Folders{Dir: cfg.DataDir}.ProjectFolder,
	}
}

// storeOf is the store cfg names, on this process's clock.
func storeOf(cfg *Config) stores.Store {
	return stores.Store{DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL, Now: processClock}
}

// processClock is this process's clock as the store reads it for its own
// times; the tests of clock skew move it in a child process
// (testmain_test.go).
var processClock = time.Now
