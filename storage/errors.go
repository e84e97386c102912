package storage

import "errors"

// The errors every store's answers match (errors.Is).
var (
	// ErrNotFound means the session or queued item does not exist.
	ErrNotFound = errors.New("not found")
	// ErrExists means a session already exists for the key.
	ErrExists = errors.New("session already exists")
)
