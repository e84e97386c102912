package mcptest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/fixtures"
)

// ReferenceDirEnv names the node_modules folder that holds the official
// MCP reference servers, installed from engine/mcp/testdata/npm (pinned
// in its package.json and package-lock.json) by .ci/run with npm ci.
// Without it, that folder in the source tree is used.
const ReferenceDirEnv = "AGENTBOT_MCP_NODE_MODULES"

// Reference returns node and the script of the reference server pkg
// ("server-everything", "server-filesystem", "server-memory",
// "server-sequential-thinking"), to run as `node script args...`. The test
// is skipped when node or the package is missing, and fails instead under
// CI=true (CI installs them).
func Reference(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	dir := os.Getenv(ReferenceDirEnv)
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "testdata", "npm", "node_modules")
	}
	script = filepath.Join(dir, "@modelcontextprotocol", pkg, "dist", "index.js")
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	default:
		if _, err := os.Stat(script); err != nil {
			missing = fmt.Sprintf("%s is not installed (cd engine/mcp/testdata/npm && npm ci, or set %s)", pkg, ReferenceDirEnv)
		}
	}
	if missing != "" {
		// Counted in the package's skip summary (fixtures.Main); a
		// failure under CI=true.
		fixtures.Unavailable(t, fixtures.NeedMCPServers, "MCP reference server: "+missing)
	}
	return node, script
}

// ReferenceEntry is an MCP config entry (YAML, under servers:) that runs
// the reference server pkg over stdio as name, with args after its script
// and extra lines (indented by four spaces) appended; its timeout is 20s.
func ReferenceEntry(t testing.TB, name, pkg, extra string, args ...string) string {
	t.Helper()
	node, script := Reference(t, pkg)
	quoted := []string{strconv.Quote(script)}
	for _, a := range args {
		quoted = append(quoted, strconv.Quote(a))
	}
	return fmt.Sprintf("  - name: %s\n    transport: stdio\n    command: %s\n    args: [%s]\n    timeout: 20s\n%s",
		name, strconv.Quote(node), strings.Join(quoted, ", "), extra)
}

// EverythingHTTP is server-everything over streamable HTTP, run as a
// child process on a loopback port.
type EverythingHTTP struct {
	// URL is the MCP endpoint.
	URL string

	t      testing.TB
	node   string
	script string
	port   int
	mu     sync.Mutex
	cmd    *exec.Cmd
}

// StartEverythingHTTP starts server-everything's streamable HTTP
// transport on a free loopback port and stops it when the test ends.
func StartEverythingHTTP(t testing.TB) *EverythingHTTP {
	t.Helper()
	node, script := Reference(t, "server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	e := &EverythingHTTP{t: t, node: node, script: script, port: port,
		URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/mcp"}
	e.start()
	t.Cleanup(e.stop)
	return e
}

// Restart stops the server and starts it again on the same port: it
// forgets every session.
func (e *EverythingHTTP) Restart() {
	e.t.Helper()
	e.stop()
	e.start()
}

func (e *EverythingHTTP) start() {
	e.t.Helper()
	cmd := exec.Command(e.node, e.script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(e.port))
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.mu.Lock()
	e.cmd = cmd
	e.mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(e.port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			e.stop()
			e.t.Fatalf("server-everything did not listen on port %d: %v", e.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *EverythingHTTP) stop() {
	e.mu.Lock()
	cmd := e.cmd
	e.cmd = nil
	e.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}
