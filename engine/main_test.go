package engine_test

import (
	"os"
	"testing"

	"agentbot/engine/fixtures"
	"agentbot/engine/mcp/mcptest"
)

func TestMain(m *testing.M) {
	code := fixtures.Main(m) // with the line on skipped tests
	mcptest.RemoveBuilds()
	os.Exit(code)
}
