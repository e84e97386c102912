package main

import (
	"context"
	"fmt"
	"io"

	"agentbot/cmd/agentbot/chat"
	"agentbot/cmd/agentbot/check"
	"agentbot/cmd/agentbot/datadir"
	"agentbot/cmd/agentbot/mcptools"
	"agentbot/cmd/agentbot/stores"
	"agentbot/engine/catalog"
)

// runChat talks to one agent in the terminal (package chat). It reads
// stdin line by line, so it can be scripted, and resumes a named session.
func runChat(ctx context.Context, e *env) int {
	var f chat.Flags
	cfg, _, code := parse("chat", e, func(fs *flagSet) { f.Register(fs.FlagSet) })
	if cfg == nil {
		return code
	}
	cfg.Project = f.Project
	if err := check.APIKey(checkConfig(cfg)); err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 2
	}
	log := newLogger(cfg, e.stderr)
	datadir.WarnLegacy(log, cfg.DataDir, cfg.LegacyData, envOf(e.getenv))
	st, err := storeOf(cfg).Open(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		if hint := storeOf(cfg).LockedHint(err); hint != "" {
			fmt.Fprintf(e.stderr, "agentbot chat: %s\n", hint)
		}
		return stores.ExitCode(err)
	}
	defer st.Close()
	defer stores.ServeControl(ctx, st, log)() // sessions and backup reach this chat's store
	rec, key, err := chat.FindSession(ctx, st, f.Session)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 1
	}
	m, err := newModel(cfg, log, nil)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 2
	}
	cat := loadCatalog(cfg)
	mc, err := mcptools.Read(cfg.MCPConfig, e.getenv, log)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 2
	}
	t := chat.New(e.stdin, e.stdout, e.stderr, e.getenv("USER"))
	t.Opening = f.Opening()
	tools, stopTools, err := mcptools.ForTerminal(ctx, mc, st, e.getenv, log, t, e.stdout, e.stderr) // people connect through 127.0.0.1
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot chat: %v\n", err)
		return 2
	}
	defer stopTools() // stops the stdio servers
	tools.WarnAgents(cat, log)
	eng := newEngine(cfg, st, m, func() *catalog.Catalog { return cat }, newBudgets(cfg, st), log, nil, tools)
	t.Explain = func(w io.Writer, cat *catalog.Catalog) { explainCatalog(w, cfg, cat) }
	return t.Run(ctx, eng, st, rec, key, f.Session, f.Agent, cat)
}
