//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentbot/engine/fixtures"
)

// mkfifo makes a FIFO at p, replacing a file there; it skips the test
// where FIFOs cannot be made.
func mkfifo(t *testing.T, p string) {
	t.Helper()
	_ = os.Remove(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

// agents returns promptly when an agent file of a bundle, a SKILL.md of a
// 6.12 project's skills folder or of the shared skills folder is a FIFO:
// each is a problem entry with its path, and the other agents load.
func TestAgentsWithFIFOs(t *testing.T) {
	bundles := t.TempDir()
	writeSolo(t, bundles, true)
	writeBundle(t, bundles, "piped", "type: standalone\nname: piped\nagent:\n  id: piped\n  file: agents/piped.md\n", map[string]string{})
	project := fixtures.Copy(t, fixtures.V612)
	skills := t.TempDir()
	if err := os.MkdirAll(filepath.Join(skills, "ok"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skills, "ok", "SKILL.md"), []byte("---\nname: ok\ndescription: A skill that loads.\n---\nDo it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifos := []string{
		filepath.Join(bundles, "piped", "agents", "piped.md"),
		filepath.Join(project, ".claude", "skills", "bmad-help", "SKILL.md"),
		filepath.Join(skills, "piped", "SKILL.md"),
	}
	for _, p := range fifos {
		mkfifo(t, p)
	}
	done := make(chan result, 1)
	go func() {
		done <- runCmd(t, nil, "", "agents", "--json", "--bundles", bundles, "--bmad-root", project, "--skills", skills)
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(waitLong):
		t.Fatal("agents hangs on a FIFO")
	}
	r.wantCode(t, 0)
	out := parseAgentsJSON(t, r.stdout)
	for _, p := range fifos {
		found := false
		for _, pr := range out.Problems {
			if pr.Path == p && strings.Contains(pr.Reason, "not a regular file") {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem entry for %s: %+v", p, out.Problems)
		}
	}
	ids := strings.Join(agentIDsOf(out), " ")
	for _, id := range []string{"solo", "pm", "agentbot"} {
		if !strings.Contains(" "+ids+" ", " "+id+" ") {
			t.Errorf("%s did not load: %s", id, ids)
		}
	}
}

// A start stuck in a system call (open(2) of a FIFO nobody writes, where
// no context reaches) still ends: after the grace on SIGTERM with 143, and
// at once on a second SIGINT with 130, well before the 10 s grace.
func TestSignalsEndAStuckStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agentbot processes")
	}
	for _, c := range []struct {
		command string
		sigs    []os.Signal
		grace   string
		code    int
		says    string
	}{
		{"agents", []os.Signal{syscall.SIGTERM}, "300ms", 143, "still busy"},
		{"serve", []os.Signal{syscall.SIGTERM}, "300ms", 143, "still busy"},
		{"serve", []os.Signal{os.Interrupt, os.Interrupt}, "", 130, "second signal"},
	} {
		fifo := filepath.Join(t.TempDir(), "stall")
		mkfifo(t, fifo)
		vars := map[string]string{
			childStallEnv: fifo, "AGENTBOT_BUNDLES": bundlesDir(t), "AGENTBOT_DATA": t.TempDir(),
			"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
		}
		if c.grace != "" {
			vars[childGraceEnv] = c.grace
		}
		p := startChild(t, c.command, c.command, vars)
		waitUntil(t, c.command+" to stall", waitLong, func() bool { return strings.Contains(p.logs.String(), "stalling") || p.exited() })
		if p.exited() {
			t.Fatalf("%s ended before the signal:\n%s", c.command, p.logs.String())
		}
		start := time.Now()
		for i, s := range c.sigs {
			if i > 0 {
				time.Sleep(100 * time.Millisecond) // two signals, not one merged
			}
			if err := p.cmd.Process.Signal(s); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-p.done:
		case <-time.After(waitLong):
			t.Fatalf("%s %v: the process did not end", c.command, c.sigs)
		}
		took := time.Since(start)
		var ee *exec.ExitError
		if !errors.As(p.err, &ee) || ee.ExitCode() != c.code || !strings.Contains(p.logs.String(), c.says) {
			t.Errorf("%s %v: exit %v, want %d and %q in:\n%s", c.command, c.sigs, p.err, c.code, c.says, p.logs.String())
		}
		if c.grace == "" && took > 5*time.Second {
			t.Errorf("%s %v: ended after %s; the second signal must not wait for the grace", c.command, c.sigs, took)
		}
	}
}
