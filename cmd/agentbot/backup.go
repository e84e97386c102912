package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"agentbot/storage/bolt"
)

// runBackup copies the database to a file: from the store when no process
// holds it, or through the running agentbot's control socket.
func runBackup(ctx context.Context, e *env) int {
	var force bool
	cfg, args, code := parse("backup", e, func(fs *flagSet) {
		fs.BoolVar(&force, "force", false, "overwrite FILE if it exists")
	})
	if cfg == nil {
		return code
	}
	if len(args) != 1 {
		fmt.Fprintln(e.stderr, "usage: agentbot backup [--force] FILE")
		return 2
	}
	if cfg.DatabaseURL != "" {
		fmt.Fprintln(e.stderr, "agentbot backup: AGENTBOT_DATABASE_URL is set: the state, documents included, is in PostgreSQL; back it up with pg_dump (agentbot backup copies the bbolt store)")
		return 2
	}
	var src interface {
		Backup(w io.Writer) (int64, error)
	}
	st, err := bolt.Open(cfg.DataDir)
	switch {
	case err == nil:
		defer st.Close()
		src = st
	case errors.Is(err, bolt.ErrLocked):
		r, derr := bolt.Dial(cfg.DataDir)
		if derr != nil {
			fmt.Fprintf(e.stderr, "agentbot backup: %v\n", heldSilently(err, derr))
			return 1
		}
		src = r
	default:
		fmt.Fprintf(e.stderr, "agentbot backup: %v\n", err)
		return 1
	}
	n, err := bolt.Backup(src, args[0], force)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentbot backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "wrote %s (%d bytes), a consistent copy of %s\n", args[0], n, bolt.DBName)
	return 0
}
