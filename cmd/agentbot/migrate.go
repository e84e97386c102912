package main

import (
	"context"
	"errors"
	"fmt"

	"agentbot/storage"
	"agentbot/storage/bolt"
)

// runMigrate copies a bbolt store (the data folder's agentbot.db, with the
// documents) into the PostgreSQL database of AGENTBOT_DATABASE_URL.
func runMigrate(ctx context.Context, e *env) int {
	var from string
	cfg, args, code := parse("migrate", e, func(fs *flagSet) {
		fs.StringVar(&from, "from", "", "data folder of the bbolt store to copy (default: --data)")
	})
	if cfg == nil {
		return code
	}
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "usage: agentbot migrate [--from DATA_FOLDER]   (into AGENTBOT_DATABASE_URL)")
		return 2
	}
	if cfg.DatabaseURL == "" {
		fmt.Fprintln(e.stderr, "agentbot migrate: set AGENTBOT_DATABASE_URL (--database-url) to the PostgreSQL database to copy into")
		return 2
	}
	if from == "" {
		from = cfg.DataDir
	}
	src, err := bolt.Open(from)
	if errors.Is(err, bolt.ErrLocked) {
		fmt.Fprintf(e.stderr, "agentbot migrate: %v: stop agentbot serve on it first, so nothing changes while it is copied\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot migrate: %v\n", err)
		return 1
	}
	defer src.Close()
	// cfg.DatabaseURL is set, so openStore opens PostgreSQL.
	dst, err := openStore(ctx, cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot migrate: %v\n", err)
		return storeExitCode(err)
	}
	defer dst.Close()
	imp, ok := dst.(storage.Importer)
	if !ok {
		fmt.Fprintf(e.stderr, "agentbot migrate: the %s store cannot import sessions\n", storeName(cfg))
		return 1
	}
	rep, err := bolt.Migrate(ctx, imp, src)
	fmt.Fprintf(e.stdout, "copied %d session(s) with %d message(s) and %d document version(s), %d channel default(s), %d channel MCP server list(s), %d queued message(s), %d project(s) with %d document version(s); %d session(s) were there already\n",
		rep.Sessions, rep.Messages, rep.Outputs, rep.Channels, rep.ChannelTools, rep.Queued, rep.Projects, rep.Documents, rep.Skipped)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot migrate: %v (what was copied stays; run it again to go on)\n", err)
		return 1
	}
	return 0
}
