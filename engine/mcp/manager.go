package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
)

// Options tune a Manager; the zero value is fine.
type Options struct {
	// Logger receives connection events (never secrets); slog.Default when nil.
	Logger *slog.Logger
	// MaxResultBytes caps the text of one result; the config's value when 0.
	MaxResultBytes int
	// BackoffBase and BackoffMax bound the wait before reconnecting a server
	// after consecutive failures (defaults 200ms and 30s). The first reconnect
	// after a failure is immediate; later ones wait base·2ⁿ, jittered.
	BackoffBase, BackoffMax time.Duration
	// TerminateWait is how long a stdio server has to exit after its stdin is
	// closed before it is signalled (default 2s).
	TerminateWait time.Duration
}

// ErrClosed is returned by calls on a closed Manager.
var ErrClosed = errors.New("mcp manager closed")

// Manager owns one session per configured server, connects it on first use,
// and reconnects it with backoff after a failure. It is safe for concurrent
// use. Close stops every stdio server it started.
type Manager struct {
	cfg   *Config
	opts  Options
	log   *slog.Logger
	conns map[string]*conn

	mu      sync.Mutex
	closed  bool
	closing sync.WaitGroup // sessions being closed in the background
}

// NewManager returns a Manager for the usable servers of cfg. Nothing is
// started until a server's tools are listed or called.
func NewManager(cfg *Config, opts Options) *Manager {
	if cfg == nil {
		cfg = &Config{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = cfg.MaxResultBytes
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 200 * time.Millisecond
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = 30 * time.Second
	}
	if opts.TerminateWait <= 0 {
		opts.TerminateWait = 2 * time.Second
	}
	m := &Manager{cfg: cfg, opts: opts, log: opts.Logger, conns: map[string]*conn{}}
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		m.conns[s.Name] = &conn{m: m, srv: s, secrets: s.secrets()}
	}
	return m
}

// Close stops every server session; stdio servers are asked to exit (stdin
// closed), then signalled, then killed. It waits until they are gone.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	for _, c := range m.conns {
		c.mu.Lock()
		if c.sess != nil {
			m.closeSession(c.sess)
			c.sess = nil
			c.tools = nil
		}
		c.mu.Unlock()
	}
	m.closing.Wait()
	return nil
}

func (m *Manager) isClosed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// closeSession closes s in the background; Close waits for it.
func (m *Manager) closeSession(s *session) {
	m.closing.Add(1)
	go func() {
		defer m.closing.Done()
		s.close()
	}()
}

// Tools lists the filtered tools of the named servers, in server order. A
// server that is unknown, unreachable or broken gives a Problem and no tools;
// the others are listed all the same.
func (m *Manager) Tools(ctx context.Context, servers []string) ([]Tool, []Problem) {
	var out []Tool
	var probs []Problem
	names, p := m.cfg.Resolve(servers)
	probs = append(probs, p...)
	taken := map[string]bool{}
	for _, n := range names {
		c := m.conns[n]
		tools, p, err := c.list(ctx)
		probs = append(probs, p...)
		if err != nil {
			probs = append(probs, Problem{Server: n, Reason: err.Error()})
			continue
		}
		for _, t := range tools {
			if taken[t.Name] {
				probs = append(probs, Problem{Server: n, Reason: fmt.Sprintf("tool %q: its name %s is already taken by another tool; left out", t.remote, t.Name)})
				continue
			}
			taken[t.Name] = true
			out = append(out, t)
		}
	}
	return out, probs
}

// session is one live connection to a server.
type session struct {
	cs   *sdk.ClientSession
	cmd  *exec.Cmd // stdio only
	dead chan struct{}
}

func (s *session) close() {
	_ = s.cs.Close()
	if s.cmd != nil {
		killGroup(s.cmd)
	}
}

// conn is the state of one configured server.
type conn struct {
	m       *Manager
	srv     *Server
	secrets []string

	mu       sync.Mutex
	sess     *session
	tools    []Tool // cached list of the current session; nil to list again
	probs    []Problem
	stale    atomic.Bool // the server said its tool list changed
	failures int         // consecutive failures
	nextTry  time.Time   // no connect before this
	lastErr  string
}

// redact replaces every secret value of the server in s.
func (c *conn) redact(s string) string {
	for _, v := range c.secrets {
		s = strings.ReplaceAll(s, v, "[redacted]")
	}
	return s
}

// errorf builds an error about this server with secrets scrubbed.
func (c *conn) errorf(format string, args ...any) error {
	return errors.New(clean(c.redact(fmt.Sprintf(format, args...)), maxErrBytes))
}

// get returns a live session, connecting if needed. Called with c.mu held.
func (c *conn) get(ctx context.Context) (*session, error) {
	if c.m.isClosed() {
		return nil, ErrClosed
	}
	if c.sess != nil {
		select {
		case <-c.sess.dead:
			c.drop("connection lost")
		default:
			return c.sess, nil
		}
	}
	if wait := time.Until(c.nextTry); wait > 0 {
		return nil, c.errorf("unavailable after %d failures (last: %s); next try in %s", c.failures, c.lastErr, wait.Round(time.Millisecond))
	}
	cctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	s, err := c.connect(cctx)
	if err != nil {
		if ctx.Err() != nil { // the caller gave up; the server is not to blame
			return nil, ctx.Err()
		}
		c.fail(err.Error())
		return nil, c.errorf("connect: %s", err)
	}
	if c.m.isClosed() { // Close ran while we connected
		c.m.closeSession(s)
		return nil, ErrClosed
	}
	c.sess = s
	c.tools = nil
	c.m.log.Info("mcp server connected", "server", c.srv.Name, "transport", c.srv.Transport)
	return s, nil
}

// fail records a failure and schedules the next connect. c.mu held.
func (c *conn) fail(why string) {
	c.failures++
	c.lastErr = c.redact(why)
	delay := time.Duration(0)
	if c.failures > 1 {
		d := c.m.opts.BackoffBase << min(c.failures-2, 20)
		if d > c.m.opts.BackoffMax || d <= 0 {
			d = c.m.opts.BackoffMax
		}
		delay = d/2 + rand.N(d/2+1)
	}
	c.nextTry = time.Now().Add(delay)
	c.m.log.Warn("mcp server failed", "server", c.srv.Name, "failures", c.failures, "retry_in", delay, "error", c.lastErr)
}

// drop closes the current session so the next use reconnects. c.mu held.
func (c *conn) drop(why string) {
	if c.sess == nil {
		return
	}
	c.m.closeSession(c.sess)
	c.sess = nil
	c.tools = nil
	c.fail(why)
}

// ok resets the failure count after a successful exchange. c.mu held.
func (c *conn) ok() {
	c.failures = 0
	c.nextTry = time.Time{}
}

func (c *conn) connect(ctx context.Context) (*session, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "agentbot", Version: "1"}, &sdk.ClientOptions{
		Logger: discardLogger,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			c.stale.Store(true)
		},
	})
	s := &session{dead: make(chan struct{})}
	var t sdk.Transport
	switch c.srv.Transport {
	case TransportStdio:
		cmd := exec.Command(c.srv.Command, c.srv.Args...)
		cmd.Env = childEnv(c.srv.Env)
		cmd.Stderr = &stderrLog{c: c}
		// Wait returns this long after the server exits even if a process it
		// started still holds stderr open.
		cmd.WaitDelay = c.m.opts.TerminateWait
		setGroup(cmd)
		s.cmd = cmd
		t = &sdk.CommandTransport{Command: cmd, TerminateDuration: c.m.opts.TerminateWait}
	case TransportHTTP:
		t = &sdk.StreamableClientTransport{
			Endpoint:             c.srv.URL,
			HTTPClient:           &http.Client{Transport: newHeaderRT(c.srv)},
			MaxRetries:           -1,
			DisableStandaloneSSE: true,
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", c.srv.Transport)
	}
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		if s.cmd != nil && s.cmd.Process != nil {
			killGroup(s.cmd) // the SDK has closed the session and reaped the server
		}
		return nil, err
	}
	s.cs = cs
	go func() {
		_ = cs.Wait()
		close(s.dead)
	}()
	return s, nil
}

// list returns the server's filtered tools, from cache when the session is
// unchanged. The Problems are for tools left out.
func (c *conn) list(ctx context.Context) ([]Tool, []Problem, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, err := c.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	if c.tools != nil && !c.stale.Load() {
		return c.tools, c.probs, nil
	}
	c.stale.Store(false)
	lctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	var raw []*sdk.Tool
	tooMany := false
	for t, err := range s.cs.Tools(lctx, nil) {
		if err == nil && len(raw) == maxTools {
			tooMany = true
			break
		}
		if err != nil {
			if ctx.Err() == nil { // not the caller giving up: the server failed
				c.drop("list tools: " + err.Error())
			}
			return nil, nil, c.errorf("list tools: %s", err)
		}
		raw = append(raw, t)
	}
	c.ok()
	tools, probs := c.build(raw)
	if tooMany {
		probs = append(probs, Problem{Server: c.srv.Name, Reason: fmt.Sprintf("lists more than %d tools; the rest are left out", maxTools)})
	}
	c.tools, c.probs = tools, probs
	if c.tools == nil {
		c.tools = []Tool{}
	}
	return c.tools, c.probs, nil
}

// call runs one tool call; see Tool.Call.
func (c *conn) call(ctx context.Context, remote string, args map[string]any) (Result, error) {
	c.mu.Lock()
	s, err := c.get(ctx)
	c.mu.Unlock()
	if err != nil {
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return Result{}, err
		}
		return c.errResult(err.Error()), nil
	}
	cctx, cancel := context.WithTimeout(ctx, c.srv.Timeout)
	defer cancel()
	res, err := s.cs.CallTool(cctx, &sdk.CallToolParams{Name: remote, Arguments: args})
	if err == nil {
		c.mu.Lock()
		c.ok()
		c.mu.Unlock()
		return toResult(res, c.m.opts.MaxResultBytes, c.redact), nil
	}
	if ctx.Err() != nil { // the caller gave up; the server is not to blame
		return Result{}, ctx.Err()
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) { // the server answered with an error: it is alive
		return c.errResult(fmt.Sprintf("tool %s: %s", remote, werr.Message)), nil
	}
	why := err.Error()
	if cctx.Err() != nil {
		why = fmt.Sprintf("no answer within %s", c.srv.Timeout)
	}
	c.mu.Lock()
	if c.sess == s {
		c.drop(why)
	}
	c.mu.Unlock()
	return c.errResult(fmt.Sprintf("tool %s: %s; the server will be reconnected", remote, why)), nil
}

func (c *conn) errResult(msg string) Result {
	text := "mcp server " + c.srv.Name + ": " + clean(c.redact(msg), maxErrBytes)
	return Result{Text: text, IsError: true, Bytes: len(text)}
}

// childEnv is the environment of a stdio server: only PATH, HOME, locale and
// temp-dir variables of our own process, plus the configured ones. The bot's
// own secrets (Slack and model tokens) are not passed on.
func childEnv(extra map[string]Secret) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for k, v := range extra {
		env = append(env, k+"="+v.Reveal())
	}
	return env
}

// headerRT adds the configured headers to every request to the configured
// host, and to no other (a redirect elsewhere gets no secret).
type headerRT struct {
	host    string
	headers map[string]Secret
	base    http.RoundTripper
}

func newHeaderRT(s *Server) *headerRT {
	h := &headerRT{headers: s.Headers, base: http.DefaultTransport}
	if u, err := url.Parse(s.URL); err == nil {
		h.host = u.Host
	}
	return h
}

func (h *headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 && r.URL.Host == h.host {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v.Reveal())
		}
	}
	return h.base.RoundTrip(r)
}

// stderrLog passes a stdio server's stderr to the debug log, line by line,
// secrets scrubbed and lines cut.
type stderrLog struct {
	c   *conn
	mu  sync.Mutex
	buf []byte
}

func (w *stderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			if len(w.buf) > 4096 {
				w.emit(w.buf)
				w.buf = w.buf[:0]
			}
			return len(p), nil
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

func (w *stderrLog) emit(line []byte) {
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if len(s) > 1024 {
		s = engine.CutUTF8(s, 1024) + "…"
	}
	w.c.m.log.Debug("mcp server stderr", "server", w.c.srv.Name, "line", w.c.redact(s))
}

var discardLogger = slog.New(slog.DiscardHandler)
