package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// A binary built with the version stamped in (-ldflags -X, as
// scripts/release does) and run from an empty folder prints that version,
// the commit from the build info and the Go version; --version is the same.
func TestVersionStamped(t *testing.T) {
	bin := buildBinary(t, "-X main.version=v9.8.7-test -X main.commit=0123456789abcdef0123456789abcdef01234567")
	dir := filepath.Dir(bin)
	for _, arg := range []string{"version", "--version"} {
		cmd := exec.Command(bin, arg)
		cmd.Dir = dir // nothing of the repository around it
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agentbot %s: %v\n%s", arg, err, out)
		}
		got := string(out)
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 3 || lines[0] != "agentbot v9.8.7-test" {
			t.Fatalf("agentbot %s:\n%s", arg, got)
		}
		if !regexp.MustCompile(`^commit   0123456789abcdef0123456789abcdef01234567( \(\S+\))?(, with uncommitted changes)?$`).MatchString(lines[1]) {
			t.Errorf("commit line %q", lines[1])
		}
		if want := "go       " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH; lines[2] != want {
			t.Errorf("go line %q, want %q", lines[2], want)
		}
	}
}

// buildBinary builds agentbot with ldflags into an empty temporary
// folder and returns its path; it skips without a go command.
func buildBinary(t *testing.T, ldflags string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build with: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "agentbot")
	// The same build flags as go test's own build, so the packages come from
	// the build cache; -buildvcs=auto stamps the commit even where GOFLAGS
	// turns it off.
	build := exec.Command(gobin, "build", "-buildvcs=auto", "-ldflags", ldflags, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

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
	contains(t, "no vcs", got, "agentbot (devel)\ncommit   unknown (built without version control information)\n")
}

// Unstamped, version falls back to the build info's module version.
func TestVersionUnstamped(t *testing.T) {
	r := runCmd(t, nil, "", "version")
	r.wantCode(t, 0)
	if !strings.HasPrefix(r.stdout, "agentbot ") || strings.HasPrefix(r.stdout, "agentbot \n") {
		t.Fatalf("version:\n%s", r.stdout)
	}
	contains(t, "version", r.stdout, "\ngo       "+runtime.Version())
	r = runCmd(t, nil, "", "version", "extra")
	r.wantCode(t, 2)
}
