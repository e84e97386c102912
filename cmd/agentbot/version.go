package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
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

// buildInfo is what agentbot version prints.
type buildInfo struct {
	Version, Commit, Time, Go, Platform string
	// Modified says the working tree had uncommitted changes.
	Modified bool
}

// readBuildInfo reads the stamped version and the build info the go
// command embeds.
func readBuildInfo() buildInfo {
	info, _ := debug.ReadBuildInfo()
	return fromBuildInfo(info, version, commit)
}

// fromBuildInfo is the buildInfo of a binary: the stamped version and
// commit when set, else the build info's (vcs.revision, vcs.time,
// vcs.modified).
func fromBuildInfo(info *debug.BuildInfo, stampedVersion, stampedCommit string) buildInfo {
	b := buildInfo{Version: stampedVersion, Commit: stampedCommit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info == nil {
		return b
	}
	b.Go = info.GoVersion
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	rev := vcs["vcs.revision"]
	if rev == "" || b.Commit != "" && b.Commit != rev {
		return b // the build info's time and state are of another commit
	}
	b.Commit, b.Time, b.Modified = rev, vcs["vcs.time"], vcs["vcs.modified"] == "true"
	return b
}

// String is the three lines agentbot version prints.
func (b buildInfo) String() string {
	v := b.Version
	if v == "" {
		v = "(unknown)"
	}
	c := "unknown (built without version control information)"
	if b.Commit != "" {
		c = b.Commit
		if b.Time != "" {
			c += " (" + b.Time + ")"
		}
		if b.Modified {
			c += ", with uncommitted changes"
		}
	}
	return fmt.Sprintf("agentbot %s\ncommit   %s\ngo       %s %s\n", v, c, b.Go, b.Platform)
}

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
	fmt.Fprint(e.stdout, readBuildInfo())
	return 0
}
