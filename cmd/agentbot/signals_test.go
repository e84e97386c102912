package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A real process stuck where its context cannot reach (a chat blocked
// reading its input) still ends on SIGTERM.
func TestSIGTERMEndsAStuckProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=chat --agent product-lead --bundles "+bundlesDir(t)+" --data "+t.TempDir(),
		childGraceEnv+"=300ms", "OPENAI_API_KEY=k", "OPENAI_BASE_URL=http://127.0.0.1:1/v1")
	r, w, err := os.Pipe() // stdin that never ends
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd.Stdin = r
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	waitUntil(t, "the greeting", waitLong, func() bool { return strings.Contains(out.String(), "Maren") })
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == -1 {
			t.Fatalf("exit: %v\n%s", err, out.String())
		}
	case <-time.After(waitLong):
		_ = cmd.Process.Kill()
		t.Fatalf("SIGTERM did not end the process:\n%s", out.String())
	}
}
