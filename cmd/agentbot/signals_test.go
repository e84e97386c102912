package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first signal cancels; the process exits with 128+signal when the
// command does not stop within the grace, or at once on a second signal.
func TestWatchSignals(t *testing.T) {
	for _, c := range []struct {
		sigs []os.Signal
		code int
		says string
	}{
		{[]os.Signal{syscall.SIGTERM}, 143, "still busy"},
		{[]os.Signal{os.Interrupt}, 130, "still busy"},
		{[]os.Signal{os.Interrupt, os.Interrupt}, 130, "second signal"},
	} {
		sigs := make(chan os.Signal, 2)
		for _, s := range c.sigs {
			sigs <- s
		}
		cancelled := make(chan struct{})
		var out bytes.Buffer
		code := make(chan int, 1)
		grace := time.Hour
		if len(c.sigs) == 1 {
			grace = 10 * time.Millisecond
		}
		go watchSignals(sigs, func() { close(cancelled) }, grace, &out, func(n int) { code <- n })
		select {
		case got := <-code:
			if got != c.code || !strings.Contains(out.String(), c.says) {
				t.Errorf("%v: exit %d, said %q", c.sigs, got, out.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: no exit", c.sigs)
		}
		select {
		case <-cancelled:
		default:
			t.Errorf("%v: the context was not cancelled", c.sigs)
		}
	}
}

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
