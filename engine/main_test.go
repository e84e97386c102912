package engine_test

import (
	"os"
	"testing"

	"agentbot/engine/mcp/mcptest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mcptest.RemoveBuilds()
	os.Exit(code)
}
