package main

import (
	"context"
	"errors"
	"fmt"
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

// storeName says which store a configuration uses, for logs and check.
func storeName(cfg *Config) string {
	if cfg.DatabaseURL != "" {
		return "postgresql"
	}
	return "bbolt"
}
