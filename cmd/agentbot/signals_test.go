package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ^C (or SIGTERM) at chat's prompt ends the chat by itself, as /quit
// does: the read of the input sees the interrupt, so the process does not
// sit out the 10 s grace and is not ended by it (which says "still busy"
// and exits 130). A start stuck where no context reaches is
// TestSignalsEndAStuckStart's.
func TestInterruptEndsChatAtItsPrompt(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { interruptChat(t, sig) })
	}
}

func interruptChat(t *testing.T, sig os.Signal) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=chat --agent product-lead --bundles "+bundlesDir(t)+" --data "+t.TempDir(),
		"OPENAI_API_KEY=k", "OPENAI_BASE_URL=http://127.0.0.1:1/v1") // the default 10 s grace
	r, w, err := os.Pipe() // stdin that never ends, as a terminal's
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
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v, want 0 (the chat ended as /quit ends it)\n%s", err, out.String())
		}
	case <-time.After(9 * time.Second): // under the grace: it must end by itself
		_ = cmd.Process.Kill()
		t.Fatalf("^C did not end the chat waiting at its prompt:\n%s", out.String())
	}
	for _, bad := range []string{"still busy", "agentbot chat:"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("the output says %q:\n%s", bad, out.String())
		}
	}
}
