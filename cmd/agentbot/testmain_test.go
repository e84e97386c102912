package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// childEnv names the environment variable that makes the test binary run
// as `agentbot <command>` instead of running tests, so end-to-end tests can
// start (and kill) real agentbot processes.
const childEnv = "AGENTBOT_TEST_CHILD"

// childGraceEnv shortens the child's stop grace (a Go duration).
const childGraceEnv = "AGENTBOT_TEST_CHILD_GRACE"

func TestMain(m *testing.M) {
	if cmd := os.Getenv(childEnv); cmd != "" {
		// The same process code as main; the grace is shortened for tests.
		grace := stopGrace
		if d, err := time.ParseDuration(os.Getenv(childGraceEnv)); err == nil {
			grace = d
		}
		os.Exit(runProcess(strings.Fields(cmd), grace))
	}
	os.Exit(m.Run())
}
