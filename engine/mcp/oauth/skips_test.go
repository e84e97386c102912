package oauth

import (
	"os"
	"testing"

	"agentbot/engine/fixtures"
)

// TestMain ends the run with one line saying how many tests skipped for a
// missing authorization server (oidc-provider from npm), and how to run
// them.
func TestMain(m *testing.M) { os.Exit(fixtures.Main(m)) }
