package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"agentbot/cmd/agentbot/signals"
	"agentbot/engine/fixtures"
	"agentbot/engine/mcp/mcptest"
)

// childEnv names the environment variable that makes the test binary run
// as `agentbot <command>` instead of running tests, so end-to-end tests can
// start (and kill) real agentbot processes.
const childEnv = "AGENTBOT_TEST_CHILD"

// childGraceEnv shortens the child's stop grace (a Go duration).
const childGraceEnv = "AGENTBOT_TEST_CHILD_GRACE"

// childClockEnv offsets the child's clock (a Go duration), as a replica
// whose clock is off.
const childClockEnv = "AGENTBOT_TEST_CHILD_CLOCK"

// childStallEnv names a FIFO the child opens for reading once its signals
// are handled and before its command runs: nobody writes to it, so the
// child is stuck in open(2), as a start stuck in a system call is.
const childStallEnv = "AGENTBOT_TEST_CHILD_STALL"

func TestMain(m *testing.M) {
	if cmd := os.Getenv(childEnv); cmd != "" {
		// The same process code as main; the grace is shortened for tests.
		grace := stopGrace
		if d, err := time.ParseDuration(os.Getenv(childGraceEnv)); err == nil {
			grace = d
		}
		if d, err := time.ParseDuration(os.Getenv(childClockEnv)); err == nil {
			processClock = func() time.Time { return time.Now().Add(d) }
		}
		ctx := signals.Stop(grace)
		if fifo := os.Getenv(childStallEnv); fifo != "" {
			fmt.Fprintln(os.Stderr, "stalling in open(2)")
			if f, err := os.Open(fifo); err == nil {
				f.Close()
			}
		}
		os.Exit(run(ctx, processEnv(strings.Fields(cmd))))
	}
	code := fixtures.Main(m) // with the line on skipped tests
	mcptest.RemoveBuilds()
	os.Exit(code)
}
