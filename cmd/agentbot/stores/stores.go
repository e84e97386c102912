// Package stores opens the store agentbot's configuration names:
// PostgreSQL, shared by replicas, or bbolt in the data folder, and says
// what to do when it does not open. serve, chat, sessions, projects and
// migrate open the configured store here (backup and migrate's source
// are bbolt's own).
package stores

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/postgres"
)

// Store is the store of a configuration.
type Store struct {
	// DataDir is the data folder: bbolt's store, and the sessions' local
	// working folders with either store.
	DataDir string
	// DatabaseURL is PostgreSQL's URL ("": bbolt in DataDir).
	DatabaseURL string
	// Now is the clock the store reads for its own times (nil:
	// time.Now). Leases and dedupe marks on PostgreSQL follow the
	// database's clock whatever it says.
	Now func() time.Time
}

// Open opens the store: PostgreSQL, shared by replicas, when a database
// URL is set, else bbolt in the data folder. An error of a PostgreSQL
// store that could not be opened is a *DatabaseError.
func (s Store) Open(ctx context.Context) (storage.Backend, error) {
	now := s.Now
	if now == nil {
		now = time.Now
	}
	if s.DatabaseURL == "" {
		st, err := bolt.Open(s.DataDir)
		if err != nil {
			return nil, err
		}
		st.Now = now
		return st, nil
	}
	st, err := postgres.Open(ctx, s.DatabaseURL, s.DataDir)
	if err != nil {
		return nil, &DatabaseError{err: err}
	}
	st.Now = now
	return st, nil
}

// OpenExisting opens the store for a command that only reads it: a bbolt
// store not made yet (no agentbot.db in the data folder) is not made, that
// is a *NoStoreError. PostgreSQL opens as with Open.
func (s Store) OpenExisting(ctx context.Context) (storage.Backend, error) {
	if err := s.Missing(); err != nil {
		return nil, err
	}
	return s.Open(ctx)
}

// Missing is a *NoStoreError when the data folder holds no bbolt store
// (a file that cannot be looked at counts as one: Open says what is wrong
// with it); nil otherwise, and always for PostgreSQL.
func (s Store) Missing() error {
	if s.DatabaseURL != "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(s.DataDir, bolt.DBName)); errors.Is(err, fs.ErrNotExist) {
		return &NoStoreError{Dir: s.DataDir}
	}
	return nil
}

// Held reaches the running agentbot (serve or chat) that holds the data
// folder's bbolt store, through its control socket; nil when none answers
// (no socket, PostgreSQL). Commands that only read ask it first, so they
// need not wait out bbolt's lock to learn the store is held.
func (s Store) Held() *bolt.Remote {
	if s.DatabaseURL != "" {
		return nil
	}
	r, err := bolt.Dial(s.DataDir)
	if err != nil {
		return nil
	}
	return r
}

// Where says which store a command reads, for the line it prints first:
// "the store in DIR" (bbolt), or PostgreSQL's; through says it is reached
// through the running agentbot that holds it.
func (s Store) Where(through bool) string {
	switch {
	case s.DatabaseURL != "":
		return "the PostgreSQL store of AGENTBOT_DATABASE_URL"
	case through:
		return "the store in " + s.DataDir + ", through the agentbot running on it"
	}
	return "the store in " + s.DataDir
}

// NoStoreError is a data folder without a store: nothing has run with it
// yet. A command that only reads says so, and makes none.
type NoStoreError struct{ Dir string }

// Error names the folder and what may be wrong.
func (e *NoStoreError) Error() string {
	return fmt.Sprintf("no store in %s yet: nothing has run with this data folder (AGENTBOT_DATA or --data names another)", e.Dir)
}

// ServeControl answers other agentbot commands (sessions list, show and
// export, connections list, backup) on the data folder's control socket
// while this process holds its bbolt store, as serve and chat do; the
// returned func stops it.
// A PostgreSQL store needs none: every process opens it.
func ServeControl(ctx context.Context, st storage.Backend, log *slog.Logger) (stop func()) {
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

// LockedHint says what to do when another process holds the data folder's
// bbolt store, for a command that needs the store to itself (a second chat
// or serve, sessions delete): "" when err, of Open, is no such case.
func (s Store) LockedHint(err error) string {
	if !errors.Is(err, bolt.ErrLocked) {
		return ""
	}
	hint := "one process at a time holds a bbolt data folder: stop the other one, give this one its own folder (--data DIR or AGENTBOT_DATA), or share a PostgreSQL store between them (AGENTBOT_DATABASE_URL)"
	if _, derr := bolt.Dial(s.DataDir); derr == nil {
		hint += "; meanwhile agentbot sessions list|show|export and agentbot backup work through the running one"
	}
	return hint
}

// DatabaseError is a PostgreSQL store that could not be opened: a setting
// to fix (exit code 2), not a failure of the run. Its text never holds the
// password (storage/postgres scrubs it).
type DatabaseError struct{ err error }

// Error says what went wrong and what to check.
func (e *DatabaseError) Error() string {
	return fmt.Sprintf("%v (check AGENTBOT_DATABASE_URL, and that the database server is up and reachable)", e.err)
}

// Unwrap returns the error of the PostgreSQL store.
func (e *DatabaseError) Unwrap() error { return e.err }

// ExitCode is the exit code of a command whose store did not open: 2 for
// a database to fix, 1 otherwise.
func ExitCode(err error) int {
	var dbe *DatabaseError
	if errors.As(err, &dbe) {
		return 2
	}
	return 1
}

// Sole reports whether the process that opens the store is its only
// user: bbolt, whose database one process holds. serve is then the sole
// replica (bot.Config.SoleReplica): its thread leases never lapse.
func (s Store) Sole() bool { return s.DatabaseURL == "" }

// Name says which store it is, for logs: postgresql or bbolt.
func (s Store) Name() string {
	if s.DatabaseURL != "" {
		return "postgresql"
	}
	return "bbolt"
}

// HeldSilently is the error of a command that found the bbolt store held
// (err) by a process that does not answer on the control socket (derr).
func HeldSilently(err, derr error) error {
	return fmt.Errorf("%w; and it does not answer on the control socket (%v), as serve and chat do: it is a short command (sessions prune, migrate: try again when it ends), or it runs on another machine that shares this folder (run this there)", err, derr)
}
