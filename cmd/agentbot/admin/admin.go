// Package admin holds agentbot's operator commands other than serve, chat
// and check: agents (the agents found, as a table or JSON), sessions and
// projects (list, show, export...), backup, migrate and health. Package
// main parses their flags and settings and wires them: the store is
// reached through a Store it builds.
package admin

import (
	"context"
	"fmt"

	"agentbot/storage"
)

// Store is how a command reaches the store the configuration names.
type Store struct {
	// Open opens the store: PostgreSQL when DatabaseURL is set, else bbolt
	// in DataDir.
	Open func(context.Context) (storage.Backend, error)
	// ExitCode is the exit code of an error of Open: 2 for a setting to
	// fix, 1 otherwise.
	ExitCode func(error) int
	// DataDir is the data folder; a running agentbot that holds its bbolt
	// store answers on its control socket.
	DataDir string
	// DatabaseURL is PostgreSQL's URL ("": bbolt).
	DatabaseURL string
}

// name says which store it is.
func (s Store) name() string {
	if s.DatabaseURL != "" {
		return "postgresql"
	}
	return "bbolt"
}

// heldSilently is the error of a command that found the bbolt store held
// (err) by a process that does not answer on the control socket (derr).
func heldSilently(err, derr error) error {
	return fmt.Errorf("%w; and it does not answer on the control socket (%v), as serve and chat do: it is a short command (sessions prune, migrate: try again when it ends), or it runs on another machine that shares this folder (run this there)", err, derr)
}
