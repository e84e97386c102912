// Package protectedtest runs a real protected MCP server for the end-to-end
// tests of MCP authorization: an MCP server built with the official
// TypeScript SDK (@modelcontextprotocol/sdk) behind its bearer-auth
// middleware, in front of oidc-provider (a certified OpenID provider) as
// its authorization server, both from npm, in one node process
// (testdata/protected.mjs). Start runs it; Browse and BrowseTo are a
// person's browser at its authorization endpoint; Calls and Refusals say
// what the server saw.
//
// The authorization server offers resource indicators (the MCP server is
// its only resource), PKCE, refresh tokens, dynamic registration,
// revocation, introspection and client credentials (ServiceClientID). Its
// access tokens are opaque; the MCP server checks each one at the
// introspection endpoint on every request, so an expired or revoked token
// is refused at once. Logging in and consenting are automatic, as the
// account the authorization URL's login_hint names.
//
// The packages come from engine/mcp/testdata/npm (the SDK) and
// engine/mcp/oauth/testdata/npm (oidc-provider), installed with npm ci
// (.ci/run does) or named by AGENTBOT_MCP_NODE_MODULES and
// AGENTBOT_OAUTH_NODE_MODULES. Without node or them a test is skipped;
// under CI=true it fails.
package protectedtest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/mcp/mcptest"
)

// OAuthModulesEnv names the node_modules folder holding oidc-provider,
// installed from engine/mcp/oauth/testdata/npm; without it, that folder in
// the source tree is used. The SDK's folder is mcptest.ReferenceDirEnv.
const OAuthModulesEnv = "AGENTBOT_OAUTH_NODE_MODULES"

// The confidential client the authorization server grants client
// credentials to (a service identity).
const (
	ServiceClientID     = "service"
	ServiceClientSecret = "service-secret-not-a-real-one"
)

// DefaultAccount is the account that logs in when the authorization URL
// has no login_hint.
const DefaultAccount = "test-user"

// startupWait bounds the server's startup (node loading both packages);
// it is a bound, not a measurement.
const startupWait = 60 * time.Second

// Options configure a Server.
type Options struct {
	// AccessTTL is the access tokens' lifetime, in whole seconds (at
	// least one); zero is an hour. Note that oauth.ExpiryLeeway (30s)
	// makes a client count a shorter-lived token as expired at once.
	AccessTTL time.Duration
}

// Server is a running protected MCP server and its authorization server.
type Server struct {
	// URL is the MCP endpoint (http://127.0.0.1:PORT/mcp), the resource
	// its tokens are issued for.
	URL string
	// Issuer is the authorization server's issuer.
	Issuer string
	// ResourceMetadataURL is where the server's protected resource
	// metadata (RFC 9728) is served, as its 401 names it.
	ResourceMetadataURL string

	t    testing.TB
	base string // the MCP server's origin
}

// Call is a tool call the MCP server answered.
type Call struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Subject is who the call's token was issued to: the account that
	// logged in, or "client:ID" for a client credentials token.
	Subject string `json:"subject"`
	// Fingerprint is the token's Fingerprint.
	Fingerprint string `json:"fingerprint"`
	// Scopes are the token's scopes.
	Scopes []string `json:"scopes"`
	// Session is the MCP session's id.
	Session string `json:"session"`
	// Arguments are the call's arguments.
	Arguments map[string]any `json:"arguments"`
}

// Refusal is a request to the MCP endpoint the server refused: 401 (no,
// an expired, a revoked or a foreign token), 403 (another subject's
// session) or 404 (an unknown session).
type Refusal struct {
	// Method is the request's HTTP method.
	Method string `json:"method"`
	// Status is the answer's status.
	Status int `json:"status"`
	// Fingerprint is the Fingerprint of the token it carried; "" for none.
	Fingerprint string `json:"fingerprint"`
	// Error is why (the WWW-Authenticate error_description, or the
	// session's problem).
	Error string `json:"error"`
}

// Fingerprint is how the server names a token without showing it: the
// first 12 hex digits of its SHA-256.
func Fingerprint(token string) string {
	if token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])[:12]
}

// Start runs the server with default options (hour-long access tokens)
// and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith runs the server with o, on free loopback ports, waits until
// it listens (within a bound), and stops it when the test ends; its
// output is logged when the test failed.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	node, script, env := locate(t)
	if o.AccessTTL > 0 {
		env = append(env, "ACCESS_TTL="+strconv.Itoa(max(1, int(o.AccessTTL/time.Second))))
	}
	out := &lockedBuffer{}
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the protected MCP server: %v", err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "ready "); ok {
				select {
				case ready <- rest:
				default:
				}
			}
			fmt.Fprintln(out, line)
		}
		_, _ = io.Copy(out, stdout) // after a line too long, the rest as it comes
	}()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("protected MCP server output:\n%s", out.String())
		}
	})
	var addrs struct{ Issuer, MCP string }
	select {
	case line := <-ready:
		if err := json.Unmarshal([]byte(line), &addrs); err != nil || addrs.Issuer == "" || addrs.MCP == "" {
			t.Fatalf("the protected MCP server's ready line %q: %v", line, err)
		}
	case <-exited:
		t.Fatalf("the protected MCP server exited:\n%s", out.String())
	case <-time.After(startupWait):
		t.Fatalf("the protected MCP server did not start within %s:\n%s", startupWait, out.String())
	}
	u, err := url.Parse(addrs.MCP)
	if err != nil {
		t.Fatal(err)
	}
	base := u.Scheme + "://" + u.Host
	return &Server{URL: addrs.MCP, Issuer: addrs.Issuer, ResourceMetadataURL: base + "/.well-known/oauth-protected-resource" + u.Path,
		t: t, base: base}
}

// locate finds node, the script and the packages (the env the script
// needs), skipping the test when one is missing (failing it under
// CI=true).
func locate(t testing.TB) (node, script string, env []string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Dir(file)
	script = filepath.Join(dir, "testdata", "protected.mjs")
	oauthModules := os.Getenv(OAuthModulesEnv)
	if oauthModules == "" {
		oauthModules = filepath.Join(dir, "..", "..", "oauth", "testdata", "npm", "node_modules")
	}
	mcpModules := os.Getenv(mcptest.ReferenceDirEnv)
	if mcpModules == "" {
		mcpModules = filepath.Join(dir, "..", "..", "testdata", "npm", "node_modules")
	}
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	case !exists(filepath.Join(oauthModules, "oidc-provider", "package.json")):
		missing = fmt.Sprintf("oidc-provider is not installed (cd engine/mcp/oauth/testdata/npm && npm ci, or set %s)", OAuthModulesEnv)
	case !exists(filepath.Join(mcpModules, "@modelcontextprotocol", "sdk", "package.json")):
		missing = fmt.Sprintf("@modelcontextprotocol/sdk is not installed (cd engine/mcp/testdata/npm && npm ci, or set %s)", mcptest.ReferenceDirEnv)
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("protected MCP server: %s", missing)
		}
		t.Skipf("protected MCP server: %s", missing)
	}
	return node, script, []string{"NODE_MODULES=" + oauthModules, "MCP_NODE_MODULES=" + mcpModules}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Entry is an MCP config entry (YAML, under servers:) for the server as
// name, identity user, with extra lines (indented by four spaces)
// appended.
func (s *Server) Entry(name, extra string) string {
	return fmt.Sprintf("  - name: %s\n    transport: http\n    url: %s\n    identity: user\n%s", name, strconv.Quote(s.URL), extra)
}

// Calls are the tool calls the server answered so far, in order. When
// the server cannot be asked, the test that started it is marked failed
// (t.Errorf, so it may be called from any goroutine or subtest) and Calls
// is nil.
func (s *Server) Calls() []Call {
	var calls []Call
	s.get("/test/calls", &calls)
	return calls
}

// Refusals are the requests to the MCP endpoint the server refused so
// far, in order; on failure as Calls.
func (s *Server) Refusals() []Refusal {
	var r []Refusal
	s.get("/test/refusals", &r)
	return r
}

func (s *Server) get(path string, v any) {
	resp, err := http.Get(s.base + path)
	if err != nil {
		s.t.Errorf("the protected MCP server's %s: %v", path, err)
		return
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil || resp.StatusCode != http.StatusOK {
		s.t.Errorf("the protected MCP server's %s: %s, %v", path, resp.Status, err)
	}
}

// maxRedirects bounds a browser's redirects: the authorization endpoint,
// the login and the consent interactions, back to the authorization
// endpoint after each, and the redirect to the client.
const maxRedirects = 20

// browser is a person's browser: a fresh cookie jar (a new session at the
// authorization server), following redirects; stopAt, when set, stops
// before a redirect it matches.
func browser(stopAt func(*url.URL) bool) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if stopAt != nil && stopAt(req.URL) {
			return http.ErrUseLastResponse
		}
		if len(via) >= maxRedirects {
			return errors.New("too many redirects")
		}
		return nil
	}}
}

// withHint is authURL with login_hint=account (unless account is "").
func withHint(t testing.TB, authURL, account string) (*url.URL, string) {
	t.Helper()
	u, err := url.Parse(authURL)
	if err != nil {
		t.Fatalf("the authorization URL: %v", err)
	}
	if account != "" {
		q := u.Query()
		q.Set("login_hint", account)
		u.RawQuery = q.Encode()
	}
	return u, u.String()
}

// Browse opens authURL as account's browser would: with login_hint=account
// added, it follows every redirect, through the authorization server's
// automatic login and consent and on to the client's redirect URI (the
// client's callback, which must answer: the flow ends there), and returns
// the last response's status and body.
func Browse(t testing.TB, authURL, account string) (status int, page string) {
	t.Helper()
	_, u := withHint(t, authURL, account)
	resp, err := browser(nil).Get(u)
	if err != nil {
		t.Fatalf("browse the authorization URL as %s: %v", account, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// BrowseTo is Browse stopped at the redirect that leaves the
// authorization server (to the client's redirect URI, with the code or
// the error): it returns that redirect's URL, not followed. The test
// fails when the authorization ends elsewhere.
func BrowseTo(t testing.TB, authURL, account string) *url.URL {
	t.Helper()
	start, u := withHint(t, authURL, account)
	resp, err := browser(func(next *url.URL) bool { return next.Host != start.Host }).Get(u)
	if err != nil {
		t.Fatalf("browse the authorization URL as %s: %v", account, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
	loc, err := resp.Location()
	if err != nil || loc.Host == start.Host {
		t.Fatalf("the authorization as %s ended at %s with %s, not at a redirect to the client: %s", account, resp.Request.URL, resp.Status, body)
	}
	return loc
}

// lockedBuffer collects the server's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
