package storage

import "errors"

// The errors every store's answers match (errors.Is).
var (
	// ErrNotFound means the session or queued item does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists means a session already exists for the key.
	ErrExists = errors.New("session already exists")
)

// ErrFenced means a write was refused because the writer's fence is stale:
// its lease on the thread expired, was released, or another holder took the
// thread over (a newer token). Nothing was written.
var ErrFenced = errors.New("fenced: the lease on the thread is no longer held")
