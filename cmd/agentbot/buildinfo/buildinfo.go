// Package buildinfo says which agentbot this is: the version and commit
// stamped in at build time, else those the go command recorded, and the Go
// version that built it (agentbot version).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Info is what agentbot version prints.
type Info struct {
	Version, Commit, Time, Go, Platform string
	// Modified says the working tree had uncommitted changes.
	Modified bool
}

// Read returns the Info of this binary: its stamped version and commit
// (main's, set with -ldflags -X; "" when unstamped) and the build info the
// go command embeds.
func Read(stampedVersion, stampedCommit string) Info {
	info, _ := debug.ReadBuildInfo()
	return fromBuildInfo(info, stampedVersion, stampedCommit)
}

// fromBuildInfo is the Info of a binary: the stamped version and
// commit when set, else the build info's (vcs.revision, vcs.time,
// vcs.modified).
func fromBuildInfo(info *debug.BuildInfo, stampedVersion, stampedCommit string) Info {
	b := Info{Version: stampedVersion, Commit: stampedCommit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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
func (b Info) String() string {
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
