package admin

import (
	"context"
	"errors"
	"fmt"
	"io"

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

// credentialLister is what the credentials listings read: the store, or a
// running agentbot's through its control socket.
type credentialLister interface {
	ListCredentials(context.Context, storage.CredentialFilter) ([]storage.CredentialInfo, error)
}

// listCredentials lists the credentials f selects for command (named in
// what it prints to stderr: the store it reads, or why it cannot), and the
// exit code when it cannot: 0 for a data folder without a store (nothing
// to list), else the store's.
func listCredentials(ctx context.Context, store stores.Store, stderr io.Writer, command string, f storage.CredentialFilter) ([]storage.CredentialInfo, int, bool) {
	st, closeStore, where, err := reach(ctx, store, func(st storage.Backend) credentialLister { return st },
		func(r *bolt.Remote) credentialLister { return r })
	var none *stores.NoStoreError
	switch {
	case errors.As(err, &none):
		fmt.Fprintf(stderr, "agentbot %s: %v\n", command, err)
		return nil, 0, false
	case err != nil:
		fmt.Fprintf(stderr, "agentbot %s: %v\n", command, err)
		return nil, stores.ExitCode(err), false
	}
	defer closeStore()
	fmt.Fprintf(stderr, "agentbot %s: reading %s\n", command, where)
	list, err := st.ListCredentials(ctx, f)
	if err != nil {
		fmt.Fprintf(stderr, "agentbot %s: %v\n", command, err)
		return nil, 1, false
	}
	return list, 0, true
}
