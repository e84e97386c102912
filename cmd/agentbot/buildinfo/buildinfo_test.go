package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// The build info's vcs settings make the commit line; a stamped commit
// wins, and the build info's time and state do not go with another commit.
func TestBuildInfoFields(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "v0.0.0-20260101000000-abcdef012345+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "abcdef0123456789abcdef0123456789abcdef01"},
			{Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	plat := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name, version, commit, want string
	}{
		{"from the build info", "", "", "agentbot v0.0.0-20260101000000-abcdef012345+dirty\ncommit   abcdef0123456789abcdef0123456789abcdef01 (2026-01-01T00:00:00Z), with uncommitted changes\ngo       go1.99.1 " + plat + "\n"},
		{"stamped", "v1.2.0", "abcdef0123456789abcdef0123456789abcdef01", "agentbot v1.2.0\ncommit   abcdef0123456789abcdef0123456789abcdef01 (2026-01-01T00:00:00Z), with uncommitted changes\ngo       go1.99.1 " + plat + "\n"},
		{"stamped, another commit", "v1.2.0", "1111111111111111111111111111111111111111", "agentbot v1.2.0\ncommit   1111111111111111111111111111111111111111\ngo       go1.99.1 " + plat + "\n"},
	} {
		if got := fromBuildInfo(info, tc.version, tc.commit).String(); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
	got := fromBuildInfo(&debug.BuildInfo{GoVersion: "go1.99.1", Main: debug.Module{Version: "(devel)"}}, "", "").String()
	if want := "agentbot (devel)\ncommit   unknown (built without version control information)\n"; !strings.Contains(got, want) {
		t.Errorf("no vcs:\n%s\nwant it to hold\n%s", got, want)
	}
}
