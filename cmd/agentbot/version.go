package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is the release's version, stamped in at build time:
//
//	go build -ldflags "-X main.version=v1.2.0" ./cmd/agentbot
//
// (scripts/release does it). Unstamped, the module version from the build
// info stands in: a pseudo-version from the commit with go build in a
// checkout, "(devel)" without one.
var version string

// buildInfo is what agentbot version prints.
type buildInfo struct {
	Version, Commit, Time, Go, Platform string
	// Modified says the working tree had uncommitted changes.
	Modified bool
}

// readBuildInfo reads the stamped version and the build info the go
// command embeds (vcs.revision, vcs.time, vcs.modified).
func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Go = info.GoVersion
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
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
	b := readBuildInfo()
	v := b.Version
	if v == "" {
		v = "(unknown)"
	}
	commit := "unknown (built without version control information)"
	if b.Commit != "" {
		commit = b.Commit
		if b.Time != "" {
			commit += " (" + b.Time + ")"
		}
		if b.Modified {
			commit += ", with uncommitted changes"
		}
	}
	fmt.Fprintf(e.stdout, "agentbot %s\ncommit   %s\ngo       %s %s\n", v, commit, b.Go, b.Platform)
	return 0
}
