package admin

import (
	"context"
	"errors"

	"agentbot/cmd/agentbot/stores"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// reach reaches the store for a command that only reads it: the running
// agentbot's (serve or chat) through its control socket, asked first when
// one holds the bbolt store, so the command need not wait out bbolt's
// lock; else the store itself, which it never makes (a data folder
// without one is a *stores.NoStoreError). local and remote make what the
// command reads of either. It returns that, what closes it, and which
// store it is (stores.Store.Where), for the line the command prints.
func reach[T any](ctx context.Context, store stores.Store, local func(storage.Backend) T, remote func(*bolt.Remote) T) (T, func(), string, error) {
	var none T
	if r := store.Held(); r != nil {
		return remote(r), func() {}, store.Where(true), nil
	}
	st, err := store.OpenExisting(ctx)
	if err == nil {
		return local(st), func() { st.Close() }, store.Where(false), nil
	}
	if !errors.Is(err, bolt.ErrLocked) {
		return none, nil, "", err
	}
	// Taken since the first look, or held by a process without a socket.
	r, derr := bolt.Dial(store.DataDir)
	if derr != nil {
		return none, nil, "", stores.HeldSilently(err, derr)
	}
	return remote(r), func() {}, store.Where(true), nil
}
