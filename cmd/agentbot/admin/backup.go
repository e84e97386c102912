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

// Backup is agentbot backup: its flag, the store and where it writes.
type Backup struct {
	Stdout, Stderr io.Writer
	Store          stores.Store
	// Force overwrites FILE if it exists.
	Force bool
}

// Run copies the database to the file args names: from the store when no
// process holds it, or through the running agentbot's control socket. It
// returns the exit code.
func (o *Backup) Run(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(o.Stderr, "usage: agentbot backup [--force] FILE")
		return 2
	}
	if o.Store.DatabaseURL != "" {
		fmt.Fprintln(o.Stderr, "agentbot backup: AGENTBOT_DATABASE_URL is set: the state, documents included, is in PostgreSQL; back it up with pg_dump (agentbot backup copies the bbolt store)")
		return 2
	}
	src, closeSrc, err := o.source()
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot backup: %v\n", err)
		return 1
	}
	defer closeSrc()
	n, err := bolt.Backup(src, args[0], o.Force)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot backup: %v\n", err)
		return 1
	}
	fmt.Fprintf(o.Stdout, "wrote %s (%d bytes), a consistent copy of %s\n", args[0], n, bolt.DBName)
	return 0
}

// backupSource is what a backup copies from: the store, or a running
// agentbot's through its control socket.
type backupSource interface {
	Backup(w io.Writer) (int64, error)
}

// source is the store to copy (reach): the running agentbot's that holds
// it, asked first, else the data folder's store, which a backup never
// makes. It says which on Stderr.
func (o *Backup) source() (backupSource, func(), error) {
	src, closeSrc, where, err := reach(context.Background(), o.Store,
		func(st storage.Backend) backupSource { return st.(*bolt.Store) }, // DatabaseURL is unset: bbolt
		func(r *bolt.Remote) backupSource { return r })
	var none *stores.NoStoreError
	if errors.As(err, &none) {
		return nil, nil, fmt.Errorf("nothing to back up: %w", err)
	}
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(o.Stderr, "agentbot backup: copying %s\n", where)
	return src, closeSrc, nil
}

// Migrate is agentbot migrate: its flag, the stores and where it writes.
type Migrate struct {
	Stdout, Stderr io.Writer
	// Store is the PostgreSQL store to copy into (Store.DatabaseURL).
	Store stores.Store
	// From is the data folder of the bbolt store to copy ("": Store.DataDir).
	From string
}

// Run copies a bbolt store (the data folder's agentbot.db, with the
// documents) into the PostgreSQL database of AGENTBOT_DATABASE_URL; args
// must be empty. It returns the exit code.
func (o *Migrate) Run(ctx context.Context, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(o.Stderr, "usage: agentbot migrate [--from DATA_FOLDER]   (into AGENTBOT_DATABASE_URL)")
		return 2
	}
	if o.Store.DatabaseURL == "" {
		fmt.Fprintln(o.Stderr, "agentbot migrate: set AGENTBOT_DATABASE_URL (--database-url) to the PostgreSQL database to copy into")
		return 2
	}
	from := o.From
	if from == "" {
		from = o.Store.DataDir
	}
	src, err := bolt.Open(from)
	if errors.Is(err, bolt.ErrLocked) {
		fmt.Fprintf(o.Stderr, "agentbot migrate: %v: stop agentbot serve on it first, so nothing changes while it is copied\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot migrate: %v\n", err)
		return 1
	}
	defer src.Close()
	// Store.DatabaseURL is set, so Open opens PostgreSQL.
	dst, err := o.Store.Open(ctx)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot migrate: %v\n", err)
		return stores.ExitCode(err)
	}
	defer dst.Close()
	imp, ok := dst.(storage.Importer)
	if !ok {
		fmt.Fprintf(o.Stderr, "agentbot migrate: the %s store cannot import sessions\n", o.Store.Name())
		return 1
	}
	rep, err := bolt.Migrate(ctx, imp, src)
	fmt.Fprintf(o.Stdout, "copied %d session(s) with %d message(s) and %d document version(s), %d channel default(s), %d channel MCP server list(s), %d queued message(s), %d project(s) with %d document version(s), %d credential(s) and %d pending authorization(s), still encrypted; %d session(s) were there already\n",
		rep.Sessions, rep.Messages, rep.Outputs, rep.Channels, rep.ChannelTools, rep.Queued, rep.Projects, rep.Documents, rep.Credentials, rep.Flows, rep.Skipped)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot migrate: %v (what was copied stays; run it again to go on)\n", err)
		return 1
	}
	return 0
}
