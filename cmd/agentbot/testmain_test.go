package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// childEnv names the environment variable that makes the test binary run
// as `agentbot <command>` instead of running tests, so end-to-end tests can
// start (and kill) real agentbot processes.
const childEnv = "AGENTBOT_TEST_CHILD"

func TestMain(m *testing.M) {
	if cmd := os.Getenv(childEnv); cmd != "" {
		// The same signal handling as main.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, &env{args: []string{cmd}, stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv})
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
