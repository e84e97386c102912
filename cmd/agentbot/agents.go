package main

import (
	"context"
	"io"

	"agentbot/cmd/agentbot/admin"
	"agentbot/engine/catalog"
)

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
