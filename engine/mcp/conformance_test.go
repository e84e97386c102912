package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/mcp/mcptest"
)

// TestConformance runs every client scenario of the official MCP
// conformance suite (@modelcontextprotocol/conformance, pinned in
// testdata/npm) against engine/mcp/conformance/client, which runs each
// one through a Manager. It reports each scenario, and fails on a
// scenario that fails without being listed in docs/development.md's "MCP
// conformance" list with its reason, and on one listed there that now
// passes (the list must shrink with each fix).
func TestConformance(t *testing.T) {
	node, script := mcptest.Reference(t, "conformance")
	// The package asks for Node 22; testdata/node20/register.mjs lets it
	// run on Node 20 (see the comment there).
	shim, err := filepath.Abs(filepath.Join("testdata", "node20", "register.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	suite := func(ctx context.Context, args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, node, append([]string{"--import", shim, script}, args...)...)
	}
	client := buildClient(t)
	expected := expectedFailures(t)

	out, err := suite(context.Background(), "list", "--client").CombinedOutput()
	if err != nil {
		t.Fatalf("list the client scenarios: %v\n%s", err, out)
	}
	var scenarios []string
	for _, m := range regexp.MustCompile(`(?m)^  - (\S+)`).FindAllSubmatch(out, -1) {
		scenarios = append(scenarios, string(m[1]))
	}
	if len(scenarios) == 0 {
		t.Fatalf("the suite lists no client scenario:\n%s", out)
	}
	for name := range expected {
		if !slices.Contains(scenarios, name) {
			t.Errorf("docs/development.md lists %s as failing, but the suite has no such scenario", name)
		}
	}

	var mu sync.Mutex
	passed := map[string]bool{}
	t.Run("scenarios", func(t *testing.T) {
		for _, name := range scenarios {
			t.Run(strings.ReplaceAll(name, "/", ":"), func(t *testing.T) {
				t.Parallel()
				ok, checks, details := runScenario(t, suite, client, name)
				mu.Lock()
				passed[name] = ok
				mu.Unlock()
				why, listed := expected[name]
				switch {
				case ok && listed:
					t.Errorf("%s passes now: take it off docs/development.md's list of failing scenarios (%q)", name, why)
				case ok:
					t.Logf("%s: PASS %s", name, checks)
				case listed:
					t.Logf("%s: FAIL %s, as docs/development.md expects (%s)", name, checks, why)
				default:
					t.Errorf("%s: FAIL %s%s", name, checks, details)
				}
			})
		}
	})
	n := 0
	for _, ok := range passed {
		if ok {
			n++
		}
	}
	t.Logf("conformance: %d of %d client scenarios pass", n, len(scenarios))
}

// runScenario runs one scenario of the suite against the client and
// reports whether it passed (no check failed, one at least succeeded, as
// the suite counts it), how many checks passed, and the failed checks with
// the end of the client's log.
func runScenario(t *testing.T, suite func(context.Context, ...string) *exec.Cmd, client, name string) (bool, string, string) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := suite(ctx, "client", "--command", client, "--scenario", name, "--output-dir", dir)
	cmd.Dir = dir
	out, runErr := cmd.CombinedOutput()
	// Results go to dir/<scenario>-<time>/checks.json, the scenario's
	// name holding a slash for the auth ones.
	var files []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			files = append(files, path)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("%s: no checks.json (suite: %v)\n%s", name, runErr, out)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []struct {
		ID, Status, ErrorMessage string
	}
	if err := json.Unmarshal(data, &checks); err != nil {
		t.Fatalf("%s: checks.json: %v", name, err)
	}
	var ok, failed int
	var why []string
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			ok++
		case "FAILURE":
			failed++
			why = append(why, fmt.Sprintf("%s: %s", c.ID, c.ErrorMessage))
		}
	}
	var details string
	if failed > 0 {
		details = "\n\t" + strings.Join(why, "\n\t")
		if stderr, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "stderr.txt")); err == nil && len(stderr) > 0 {
			details += "\n\tclient stderr:\n" + lastLines(string(stderr), 15)
		}
	}
	return failed == 0 && ok > 0, fmt.Sprintf("(%d of %d checks)", ok, ok+failed), details
}

// lastLines is the last n lines of s, indented.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	return "\t\t" + strings.Join(lines, "\n\t\t")
}

// buildClient builds engine/mcp/conformance/client into the test's
// temporary folder.
func buildClient(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "conformance-client")
	if out, err := exec.Command(goBin, "build", "-o", bin, "./conformance/client").CombinedOutput(); err != nil {
		t.Fatalf("build the conformance client: %v\n%s", err, out)
	}
	return bin
}

// expectedFailures reads docs/development.md's list of the conformance scenarios
// left failing: under the heading "MCP conformance", each item names
// scenarios in backquotes, then a colon and the reason.
func expectedFailures(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	item := regexp.MustCompile("^- ((?:`[^`]+`(?:, )?)+): (.+)$")
	name := regexp.MustCompile("`([^`]+)`")
	out := map[string]string{}
	in, found := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			in = strings.Contains(line, "MCP conformance")
			found = found || in
			continue
		}
		if !in {
			continue
		}
		m := item.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			out[n[1]] = strings.TrimSpace(m[2])
		}
	}
	if !found {
		t.Fatal(`docs/development.md has no heading "MCP conformance" with the scenarios left failing`)
	}
	return out
}
