package main

import (
	"context"
	"fmt"

	"agentbot/cmd/agentbot/buildinfo"
)

// version and commit are the release's version and commit, stamped in at
// build time (scripts/release does it):
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.commit=$(git rev-parse HEAD)" ./cmd/agentbot
//
// Unstamped, the build info stands in: the module version (a
// pseudo-version from the commit with go build in a checkout, "(devel)"
// without one) and vcs.revision, which the go command records in a git
// checkout unless -buildvcs=false (it does not in a git worktree, whose
// .git is a file: hence commit).
var version, commit string

// runVersion prints the version, the commit it was built from and the Go
// version that built it.
func runVersion(_ context.Context, e *env) int {
	cfg, args, code := parse("version", e, nil)
	if cfg == nil {
		return code
	}
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "usage: agentbot version")
		return 2
	}
	fmt.Fprint(e.stdout, buildinfo.Read(version, commit))
	return 0
}
