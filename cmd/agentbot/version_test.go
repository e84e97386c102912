package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
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
