package main

import (
	"context"
	"io"

	"agentbot/cmd/agentbot/admin"
	"agentbot/engine/catalog"
	"agentbot/storage"
)

// The operator's commands other than serve, chat and check: each parses
// its flags and settings here and runs in package admin.

// runAgents lists the agents found in the configured bundles and BMAD
// roots (admin.Agents). It exits 1 only when no agent at all could be
// loaded.
func runAgents(ctx context.Context, e *env) int {
	o := admin.AgentsOptions{Getenv: e.getenv}
	cfg, _, code := parse("agents", e, func(fs *flagSet) {
		fs.BoolVar(&o.JSON, "json", false, "print {\"agents\":[...],\"problems\":[...]}")
		fs.BoolVar(&o.All, "all", true, "include agents that are not entry points")
	})
	if cfg == nil {
		return code
	}
	o.MCPConfig = cfg.MCPConfig
	return admin.Agents(ctx, e.stdout, e.stderr, loadCatalog(cfg), o)
}

// explainCatalog says, after "no agent ..." on w, why (admin.ExplainCatalog).
func explainCatalog(w io.Writer, cfg *Config, cat *catalog.Catalog) {
	admin.ExplainCatalog(w, admin.Sources{Bundles: cfg.Bundles, BMADRoots: cfg.BMADRoots, Skills: cfg.Skills}, cat)
}

// runSessions lists, shows, exports, deletes or prunes stored sessions
// (admin.Sessions).
func runSessions(ctx context.Context, e *env) int {
	o := &admin.Sessions{Stdout: e.stdout, Stderr: e.stderr}
	cfg, args, code := parse("sessions", e, func(fs *flagSet) {
		fs.StringVar(&o.Out, "o", "", "export: write to this file instead of stdout")
		fs.BoolVar(&o.Force, "force", false, "export: overwrite the -o file if it exists")
		fs.DurationVar(&o.OlderThan, "older-than", 0, "prune: remove sessions inactive this long (default: --session-ttl)")
	})
	if cfg == nil {
		return code
	}
	o.Store, o.TTL = adminStore(cfg), cfg.SessionTTL
	return o.Run(ctx, args)
}

// runProjects lists, shows, exports or imports projects' documents
// (admin.Projects).
func runProjects(ctx context.Context, e *env) int {
	o := &admin.Projects{Stdout: e.stdout, Stderr: e.stderr}
	cfg, args, code := parse("projects", e, func(fs *flagSet) {
		fs.BoolVar(&o.AllVersions, "all-versions", false, "export: every version too, under DIR/.history")
	})
	if cfg == nil {
		return code
	}
	o.Store, o.MaxFileBytes = adminStore(cfg), cfg.MaxFileBytes
	return o.Run(ctx, args)
}

// adminStore is how the operator's commands (package admin) reach the
// store cfg names.
func adminStore(cfg *Config) admin.Store {
	return admin.Store{
		Open:     func(ctx context.Context) (storage.Backend, error) { return openStore(ctx, cfg) },
		ExitCode: storeExitCode, DataDir: cfg.DataDir, DatabaseURL: cfg.DatabaseURL,
	}
}
