package admin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"agentbot/cmd/agentbot/stores"
	"agentbot/storage/bolt"
	"agentbot/storage/credentials"
	"agentbot/storage/secretbox"
)

// RotateKey is agentbot rotate-key: the store and the keys.
type RotateKey struct {
	Stdout, Stderr io.Writer
	Store          stores.Store
	// Getenv reads the key settings (secretbox.Load).
	Getenv func(string) string
}

// Run re-seals every stored credential under the current key
// (AGENTBOT_SECRET_KEY, or the first of AGENTBOT_SECRET_KEY_FILE), opening
// each with whichever key of the keyring sealed it (the older ones in
// AGENTBOT_SECRET_KEY_PREVIOUS or the file's further lines); args must be
// empty. It returns the exit code: 1 when a credential did not open.
func (o *RotateKey) Run(ctx context.Context, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(o.Stderr, "usage: agentbot rotate-key   (re-encrypts every credential under AGENTBOT_SECRET_KEY; older keys in AGENTBOT_SECRET_KEY_PREVIOUS)")
		return 2
	}
	kr, err := secretbox.Load(o.Getenv)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot rotate-key: %v\n", err)
		return 2
	}
	st, err := o.Store.Open(ctx)
	if errors.Is(err, bolt.ErrLocked) {
		fmt.Fprintf(o.Stderr, "agentbot rotate-key: %v: stop agentbot serve on it first\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot rotate-key: %v\n", err)
		return stores.ExitCode(err)
	}
	defer st.Close()
	v, err := credentials.New(st, kr, nil)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot rotate-key: %v\n", err)
		return 1
	}
	rep, err := v.Rotate(ctx)
	fmt.Fprintf(o.Stdout, "re-encrypted %d credential(s) under key %s; %d were under it already\n", rep.Resealed, kr.Current(), rep.Current)
	for _, f := range rep.Failed {
		fmt.Fprintf(o.Stderr, "agentbot rotate-key: %s\n", f)
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentbot rotate-key: %v (add the key that sealed them to AGENTBOT_SECRET_KEY_PREVIOUS, or disconnect them)\n", err)
		return 1
	}
	return 0
}
