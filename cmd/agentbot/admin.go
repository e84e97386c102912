package main

import (
	"context"
	"io"

	"agentbot/cmd/agentbot/admin"
	"agentbot/cmd/agentbot/catalogs"
	"agentbot/engine/catalog"
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

// explainCatalog says, after "no agent ..." on w, why (catalogs.Explain).
func explainCatalog(w io.Writer, cfg *Config, cat *catalog.Catalog) {
	catalogs.Explain(w, sources(cfg), cfg.DataDir, cat)
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
	o.Store, o.TTL = storeOf(cfg), cfg.SessionTTL
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
	o.Store, o.MaxFileBytes = storeOf(cfg), cfg.MaxFileBytes
	return o.Run(ctx, args)
}

// runBackup copies the database to a file (admin.Backup).
func runBackup(_ context.Context, e *env) int {
	o := &admin.Backup{Stdout: e.stdout, Stderr: e.stderr}
	cfg, args, code := parse("backup", e, func(fs *flagSet) {
		fs.BoolVar(&o.Force, "force", false, "overwrite FILE if it exists")
	})
	if cfg == nil {
		return code
	}
	o.Store = storeOf(cfg)
	return o.Run(args)
}

// runMigrate copies a bbolt store into PostgreSQL (admin.Migrate).
func runMigrate(ctx context.Context, e *env) int {
	o := &admin.Migrate{Stdout: e.stdout, Stderr: e.stderr}
	cfg, args, code := parse("migrate", e, func(fs *flagSet) {
		fs.StringVar(&o.From, "from", "", "data folder of the bbolt store to copy (default: --data)")
	})
	if cfg == nil {
		return code
	}
	o.Store = storeOf(cfg)
	return o.Run(ctx, args)
}

// runRotateKey re-seals the stored credentials under the current key
// (admin.RotateKey).
func runRotateKey(ctx context.Context, e *env) int {
	o := &admin.RotateKey{Stdout: e.stdout, Stderr: e.stderr, Getenv: envOf(e.getenv)}
	cfg, args, code := parse("rotate-key", e, func(*flagSet) {})
	if cfg == nil {
		return code
	}
	o.Store = storeOf(cfg)
	return o.Run(ctx, args)
}

// runConnections lists or revokes stored MCP connections
// (admin.Connections).
func runConnections(ctx context.Context, e *env) int {
	o := &admin.Connections{Stdout: e.stdout, Stderr: e.stderr, Getenv: envOf(e.getenv)}
	cfg, args, code := parse("connections", e, func(fs *flagSet) {
		fs.StringVar(&o.Team, "team", "", "list: only this team's connections")
		fs.StringVar(&o.User, "user", "", "list: only this Slack user's ((service): service identities)")
		fs.StringVar(&o.Server, "server", "", "list: only connections to this MCP server")
	})
	if cfg == nil {
		return code
	}
	o.Store = storeOf(cfg)
	return o.Run(ctx, args)
}

// runInstalls lists or revokes Slack installations (admin.Installs).
func runInstalls(ctx context.Context, e *env) int {
	o := &admin.Installs{Stdout: e.stdout, Stderr: e.stderr, Getenv: envOf(e.getenv)}
	cfg, args, code := parse("installs", e, nil)
	if cfg == nil {
		return code
	}
	o.Store, o.APIURL = storeOf(cfg), cfg.SlackAPIURL
	return o.Run(ctx, args)
}

// runManifest prints the Slack app manifest (admin.Manifest).
func runManifest(_ context.Context, e *env) int {
	mode := "socket"
	cfg, _, code := parse("manifest", e, func(fs *flagSet) { fs.StringVar(&mode, "mode", "socket", "socket (manifest.yaml) or http") })
	if cfg == nil {
		return code
	}
	return admin.Manifest(e.stdout, e.stderr, mode, cfg.PublicURL)
}

// runHealth asks a running serve's /healthz (admin.Health). Docker
// reserves exit code 2, so every failure, a bad flag too, exits 1.
func runHealth(ctx context.Context, e *env) int {
	o := &admin.Health{Stdout: e.stdout, Stderr: e.stderr, Timeout: admin.DefaultHealthTimeout}
	cfg, args, code := parse("health", e, func(fs *flagSet) {
		fs.StringVar(&o.URL, "url", "", "the /healthz URL to ask (default: /healthz at --http-addr, its host made 127.0.0.1 when empty or 0.0.0.0)")
		fs.DurationVar(&o.Timeout, "timeout", admin.DefaultHealthTimeout, "how long to wait for the answer")
	})
	if cfg == nil {
		return min(code, 1)
	}
	o.HTTPAddr = cfg.HTTPAddr
	return o.Run(ctx, args)
}
