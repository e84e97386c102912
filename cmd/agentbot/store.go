package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/postgres"
)

// openStore opens the store the configuration names: PostgreSQL, shared by
// replicas, when a database URL is set, else bbolt in the data folder. The
// data folder holds the session's local working folders in both cases.
func openStore(ctx context.Context, cfg *Config) (storage.Backend, error) {
	if cfg.DatabaseURL == "" {
		st, err := bolt.Open(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		st.Now = processClock
		return st, nil
	}
	st, err := postgres.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, &databaseError{err: err}
	}
	st.Now = processClock
	return st, nil
}

// serveControl answers other agentbot commands (sessions list, show and
// export, backup) on the data folder's control socket while this process
// holds its bbolt store, as serve and chat do; the returned func stops it.
// A PostgreSQL store needs none: every process opens it.
func serveControl(ctx context.Context, st storage.Backend, log *slog.Logger) (stop func()) {
	local, ok := st.(*bolt.Store)
	if !ok {
		return func() {}
	}
	stop, err := local.ServeControl(ctx)
	if err != nil {
		log.Warn("control socket: backup and sessions will not reach this process", "err", err)
		return func() {}
	}
	return stop
}

// lockedHint says what to do when another process holds the data folder's
// bbolt store, for a command that needs the store to itself (a second chat
// or serve, sessions delete): "" when err is no such case.
func lockedHint(err error, cfg *Config) string {
	if !errors.Is(err, bolt.ErrLocked) {
		return ""
	}
	hint := "one process at a time holds a bbolt data folder: stop the other one, give this one its own folder (--data DIR or AGENTBOT_DATA), or share a PostgreSQL store between them (AGENTBOT_DATABASE_URL)"
	if _, derr := bolt.Dial(cfg.DataDir); derr == nil {
		hint += "; meanwhile agentbot sessions list|show|export and agentbot backup work through the running one"
	}
	return hint
}

// processClock is this process's clock as the store reads it for its own
// times; the tests of clock skew move it in a child process
// (testmain_test.go). Leases and dedupe marks on PostgreSQL follow the
// database's clock whatever it says.
var processClock = time.Now

// databaseError is a PostgreSQL store that could not be opened: a setting
// to fix (exit code 2), not a failure of the run. Its text never holds the
// password (storage/postgres scrubs it).
type databaseError struct{ err error }

func (e *databaseError) Error() string {
	return fmt.Sprintf("%v (check AGENTBOT_DATABASE_URL, and that the database server is up and reachable)", e.err)
}

func (e *databaseError) Unwrap() error { return e.err }

// storeExitCode is the exit code of a command whose store did not open:
// 2 for a database to fix, 1 otherwise.
func storeExitCode(err error) int {
	var dbe *databaseError
	if errors.As(err, &dbe) {
		return 2
	}
	return 1
}

// storeName says which store a configuration uses, for logs.
func storeName(cfg *Config) string {
	if cfg.DatabaseURL != "" {
		return "postgresql"
	}
	return "bbolt"
}
