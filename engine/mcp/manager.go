package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
	"agentbot/engine/retry"
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
	// MaxFrameBytes is the largest message read from a server (default
	// DefaultMaxFrameBytes).
	MaxFrameBytes int
	// ListBudget is the longest a turn waits for the tool list of a server
	// that has a known list or is known to be failing (default 150ms).
	// Servers connect and list in the background; one that has not
	// answered by then is served from its last known list, or left out of
	// the turn with a Problem, while it keeps connecting. A server that has
	// never listed its tools in this process and has not failed (a cold
	// start: a stdio server takes a second or two to start) is waited for
	// up to its timeout instead.
	ListBudget time.Duration
	// Elicit asks the person a tool call acts for what a server requests
	// in the middle of the call (elicitation/create, form mode). With it,
	// the client declares elicitation, and a call's timeout does not run
	// while the person is asked; without it, elicitation is not declared.
	Elicit ElicitFunc
	// Authorizer gives the HTTP servers with identity service their OAuth
	// tokens. Without it, such a server that asks for authorization is
	// unavailable, saying so. Identity user servers do not use it yet:
	// per-person sessions are not built, so one that asks for
	// authorization is unavailable ("needs per-person authorization, not
	// yet wired").
	Authorizer Authorizer
}

// DefaultListBudget is Options.ListBudget's default.
const DefaultListBudget = 150 * time.Millisecond

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

	// bg is the context of background connects and listings, cancelled by
	// Close; flights counts them so Close waits for them.
	bg      context.Context
	stop    context.CancelFunc
	flights sync.WaitGroup
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
	if opts.ListBudget <= 0 {
		opts.ListBudget = DefaultListBudget
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = DefaultMaxFrameBytes
	}
	m := &Manager{cfg: cfg, opts: opts, log: opts.Logger, conns: map[string]*conn{}}
	m.bg, m.stop = context.WithCancel(context.Background())
	for i := range cfg.Servers {
		s := cfg.Servers[i] // a copy: a Server built in code may leave the timeouts out
		if s.Timeout <= 0 {
			s.Timeout = DefaultTimeout
		}
		if s.MaxTimeout <= 0 {
			s.MaxTimeout = DefaultMaxTimeout
		}
		s.MaxTimeout = max(s.MaxTimeout, s.Timeout)
		m.conns[s.Name] = &conn{m: m, srv: &s, secrets: s.secrets()}
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
	m.stop()
	m.flights.Wait()
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

// track counts a new background flight, unless the Manager is closed:
// Close waits for the flights counted before it.
func (m *Manager) track() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.flights.Add(1)
	return true
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

// Tools lists the filtered tools of the named servers, in server order,
// waiting at most Options.ListBudget for them (all servers at once), or
// a server's timeout for one starting cold (see Options.ListBudget). A
// server that is unknown, unreachable, broken or still connecting gives a
// Problem (Unavailable) and no tools, or its last known tools with a
// Problem saying how old they are; the others are listed all the same.
func (m *Manager) Tools(ctx context.Context, servers []string) ([]Tool, []Problem) {
	return m.tools(ctx, servers, m.opts.ListBudget)
}

// ToolsWait is Tools without the listing budget: it waits until each
// server answers or fails, or ctx ends (for commands such as agentbot
// agents).
func (m *Manager) ToolsWait(ctx context.Context, servers []string) ([]Tool, []Problem) {
	return m.tools(ctx, servers, 0)
}

// Warm connects the named servers and lists their tools in the background,
// so the first turn that needs them finds them ready.
func (m *Manager) Warm(servers []string) {
	names, _ := m.cfg.Resolve(servers)
	for _, n := range names {
		c := m.conns[n]
		c.mu.Lock()
		c.startList()
		c.mu.Unlock()
	}
}

// tools is Tools with a budget (<= 0: wait until each server answers or
// fails, or ctx ends).
func (m *Manager) tools(ctx context.Context, servers []string, budget time.Duration) ([]Tool, []Problem) {
	names, probs := m.cfg.Resolve(servers)
	for i := range probs {
		probs[i].Unavailable = true
	}
	type listing struct {
		tools []Tool
		probs []Problem
		err   error
	}
	got := make([]listing, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := &got[i]
			l.tools, l.probs, l.err = m.conns[n].list(ctx, budget)
		}()
	}
	wg.Wait()
	var out []Tool
	taken := map[string]bool{}
	for i, n := range names {
		probs = append(probs, got[i].probs...)
		if got[i].err != nil {
			probs = append(probs, Problem{Server: n, Reason: got[i].err.Error(), Unavailable: true})
			continue
		}
		for _, t := range got[i].tools {
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
	// authErr is the last authorization error of a request (read after a
	// failed connect); authLogged the last one logged, so each is logged
	// once.
	authErr    atomic.Pointer[error]
	authLogged string
	// connecting and listing are the background connect and listing under
	// way, nil when none is.
	connecting, listing *flight
	// known is the last tool list the server gave (kept across sessions),
	// knownProbs its problems, knownAt when it was listed.
	known      []Tool
	knownProbs []Problem
	knownAt    time.Time
	// asking counts the server's requests for input being answered;
	// askedAt is when the last one was answered (UnixNano).
	asking  atomic.Int32
	askedAt atomic.Int64
	// taskOnly holds the names of the tools that must be called as MCP
	// tasks (see noteTaskTools); progress the progress handlers of the
	// calls under way, by progress token.
	taskOnly sync.Map
	progress sync.Map
}

// flight is a background connect or listing: done is closed when it ends,
// err is then set when it failed.
type flight struct {
	done    chan struct{}
	err     error
	started time.Time
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

// session returns a live session, waiting until ctx ends for a
// background connect when there is none.
func (c *conn) session(ctx context.Context) (*session, error) {
	c.mu.Lock()
	s, f, err := c.sessionOrConnect()
	c.mu.Unlock()
	if s != nil || err != nil {
		return s, err
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if f.err != nil {
		return nil, f.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		return nil, c.errorf("connection lost right after connecting")
	}
	return c.sess, nil
}

// sessionOrConnect returns the live session, or else the background
// connect that makes one (starting it when none is under way), or else why
// the server is not tried now (closed, backing off). c.mu held.
func (c *conn) sessionOrConnect() (*session, *flight, error) {
	if c.m.isClosed() {
		return nil, nil, ErrClosed
	}
	if c.sess != nil {
		select {
		case <-c.sess.dead:
			c.drop("connection lost")
		default:
			return c.sess, nil, nil
		}
	}
	if c.connecting != nil {
		return nil, c.connecting, nil
	}
	if wait := time.Until(c.nextTry); wait > 0 {
		return nil, nil, c.errorf("unavailable after %d failures (last: %s); next try in %s", c.failures, c.lastErr, wait.Round(time.Millisecond))
	}
	if !c.m.track() {
		return nil, nil, ErrClosed
	}
	f := &flight{done: make(chan struct{}), started: time.Now()}
	c.connecting = f
	go c.runConnect(f)
	return nil, f, nil
}

// runConnect connects in the background, within the server's timeout, and
// makes the result the current session.
func (c *conn) runConnect(f *flight) {
	defer c.m.flights.Done()
	ctx, cancel := context.WithTimeout(c.m.bg, c.srv.Timeout)
	defer cancel()
	c.authErr.Store(nil)
	s, err := c.connect(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(f.done)
	c.connecting = nil
	switch {
	case err != nil && c.m.bg.Err() != nil:
		f.err = ErrClosed
	case err != nil:
		if ae := c.authErr.Swap(nil); ae != nil {
			err = *ae // the SDK's error may not wrap it
		} else if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", c.srv.Timeout)
		}
		if errors.Is(err, ErrAuthorizationNeeded) {
			c.failAuth(err.Error())
		} else {
			c.fail(err.Error())
		}
		f.err = c.errorf("connect: %s", err)
	case c.m.isClosed(): // Close ran while we connected
		c.m.closeSession(s)
		f.err = ErrClosed
	default:
		c.sess = s
		c.tools = nil
		c.m.log.Info("mcp server connected", "server", c.srv.Name, "transport", c.srv.Transport)
	}
}

// fail records a failure and schedules the next connect. c.mu held.
func (c *conn) fail(why string) {
	c.failures++
	c.lastErr = c.redact(why)
	delay := time.Duration(0)
	if c.failures > 1 {
		delay = retry.Policy{Base: c.m.opts.BackoffBase, Max: c.m.opts.BackoffMax}.Backoff(c.failures - 1)
	}
	c.nextTry = time.Now().Add(delay)
	c.m.log.Warn("mcp server failed", "server", c.srv.Name, "failures", c.failures, "retry_in", delay, "error", c.lastErr)
}

// failAuth is fail for a server that needs authorization: the reason is
// logged once, not at every try. c.mu held.
func (c *conn) failAuth(why string) {
	why = c.redact(why)
	if c.authLogged != why {
		c.authLogged = why
		c.m.log.Warn("mcp server needs authorization", "server", c.srv.Name, "identity", IdentityOf(c.srv), "reason", why)
	}
	c.failures++
	c.lastErr = why
	c.nextTry = time.Now().Add(retry.Policy{Base: c.m.opts.BackoffBase, Max: c.m.opts.BackoffMax}.Backoff(c.failures))
}

// httpTransport is the transport of the server's HTTP requests, by its
// identity (see newAuthRT).
func (c *conn) httpTransport() http.RoundTripper {
	who := Identity{Kind: IdentityOf(c.srv)}
	var a Authorizer
	var noAuth error
	switch who.Kind {
	case IdentityUser:
		noAuth = errUserNotWired
	case IdentityService:
		a = c.m.opts.Authorizer
		noAuth = fmt.Errorf("%w: identity service needs an authorizer, and none is configured", ErrAuthorizationNeeded)
	}
	return newAuthRT(c.srv, who, a, noAuth, c.noteTaskTools, func(err error) {
		c.authErr.Store(&err)
	})
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
		// Only what agentbot supports: no roots, no sampling; elicitation
		// (form mode) when there is an Elicit hook, which the SDK adds to
		// these from the handler.
		Capabilities:       &sdk.ClientCapabilities{},
		ElicitationHandler: c.elicitHandler(),
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			c.stale.Store(true)
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			if h, ok := c.progress.Load(fmt.Sprint(r.Params.ProgressToken)); ok {
				h.(func(*sdk.ProgressNotificationParams))(r.Params)
			}
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
		t = &stdioTransport{cmd: cmd, terminate: c.m.opts.TerminateWait, maxFrame: c.m.opts.MaxFrameBytes, sniff: c.noteTaskTools}
	case TransportHTTP:
		rt := c.httpTransport()
		// The standalone SSE stream (a GET) carries what the server sends
		// outside the answer to a request: its requests for input, and the
		// notice that its tool list changed. A stream that breaks is
		// reconnected by the SDK with Last-Event-ID, after the server's
		// retry delay, up to its default number of tries.
		t = &sdk.StreamableClientTransport{
			Endpoint:     c.srv.URL,
			HTTPClient:   &http.Client{Transport: rt},
			MaxEventSize: c.m.opts.MaxFrameBytes,
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
// unchanged, else from a background listing it waits for at most budget
// from the listing's start (<= 0: until it ends), or the server's timeout
// when it starts cold. When the listing takes longer the last known
// tools are served, with a Problem giving their age; without any, the
// error says the server is still connecting. The Problems are for tools
// left out.
func (c *conn) list(ctx context.Context, budget time.Duration) ([]Tool, []Problem, error) {
	c.mu.Lock()
	if c.m.isClosed() {
		c.mu.Unlock()
		return nil, nil, ErrClosed
	}
	if c.tools != nil && !c.stale.Load() && c.live() {
		defer c.mu.Unlock()
		return c.tools, c.probs, nil
	}
	f := c.startList()
	if budget > 0 && c.cold() {
		// The budget on top lets a connect that fails at its timeout
		// report why.
		budget += c.srv.Timeout
	}
	c.mu.Unlock()
	var timer <-chan time.Time
	if budget > 0 {
		// A listing under way for longer than the budget already is not
		// waited for again: a hung server costs one budget, not one per turn.
		t := time.NewTimer(max(budget-time.Since(f.started), 0))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-f.done:
	case <-timer:
	case <-ctx.Done():
	}
	select {
	case <-f.done: // done, even if the budget ran out at the same time
		if f.err == nil {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.known, c.knownProbs, nil
		}
		return c.lastKnown(ctx, f.err)
	default:
		return c.lastKnown(ctx, nil)
	}
}

// cold reports whether the server has never listed its tools in this
// process and has not failed: a turn waits for it up to its timeout, not
// the budget, so the first turn of a fresh process gets its tools. One
// that has failed once is known to be failing, and costs a turn only the
// budget. c.mu held.
func (c *conn) cold() bool {
	return c.known == nil && c.failures == 0 && c.lastErr == ""
}

// lastKnown is what list serves when the server has not given its tools
// within the budget (err nil) or failed to (err): its last known tools,
// with a Problem giving their age, or else an error.
func (c *conn) lastKnown(ctx context.Context, err error) ([]Tool, []Problem, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if errors.Is(err, ErrClosed) || c.known == nil && err != nil {
		return nil, nil, err
	}
	why := "not answering yet"
	if err != nil {
		why = "unavailable (" + err.Error() + ")"
	} else if c.lastErr != "" {
		why = "not answering (last error: " + c.lastErr + ")"
	}
	if c.known == nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, c.errorf("%s; connecting in the background", why)
	}
	age := time.Since(c.knownAt).Round(time.Second)
	probs := append(slices.Clone(c.knownProbs), Problem{Server: c.srv.Name,
		Reason: clean(fmt.Sprintf("%s; serving its tool list from %s ago until it answers", why, age), maxErrBytes)})
	return c.known, probs, nil
}

// live reports whether the current session is up. c.mu held.
func (c *conn) live() bool {
	if c.sess == nil {
		return false
	}
	select {
	case <-c.sess.dead:
		return false
	default:
		return true
	}
}

// startList returns the background listing under way, starting one if
// there is none. c.mu held.
func (c *conn) startList() *flight {
	if c.listing != nil {
		return c.listing
	}
	f := &flight{done: make(chan struct{}), started: time.Now()}
	if !c.m.track() { // closed: the flight ends at once
		f.err = ErrClosed
		close(f.done)
		return f
	}
	c.listing = f
	go func() {
		defer c.m.flights.Done()
		tools, probs, err := c.fetchTools()
		c.mu.Lock()
		defer c.mu.Unlock()
		defer close(f.done)
		c.listing = nil
		if err != nil {
			f.err = err
			return
		}
		c.tools, c.probs = tools, probs
		c.known, c.knownProbs, c.knownAt = tools, probs, time.Now()
	}()
	return f
}

// fetchTools connects if needed and lists the server's tools, within its
// timeout for each step.
func (c *conn) fetchTools() ([]Tool, []Problem, error) {
	ctx := c.m.bg
	s, err := c.session(ctx)
	if err != nil {
		return nil, nil, err
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
			if ctx.Err() != nil {
				return nil, nil, ErrClosed
			}
			why := err.Error()
			if lctx.Err() != nil {
				why = fmt.Sprintf("no answer within %s", c.srv.Timeout)
			}
			c.mu.Lock()
			if c.sess == s {
				c.drop("list tools: " + why)
			}
			c.mu.Unlock()
			return nil, nil, c.errorf("list tools: %s", why)
		}
		raw = append(raw, t)
	}
	c.mu.Lock()
	c.ok()
	c.mu.Unlock()
	tools, probs := c.build(raw)
	if c.readsResources(s, tools) {
		tools = append(tools, c.readTool())
	}
	if tooMany {
		probs = append(probs, Problem{Server: c.srv.Name, Reason: fmt.Sprintf("lists more than %d tools; the rest are left out", maxTools)})
	}
	if tools == nil {
		tools = []Tool{}
	}
	return tools, probs, nil
}

// readsResources reports whether the server gets a read_resource tool:
// it offers resources, the config's filters let the tool in, and no tool
// of its own has that name.
func (c *conn) readsResources(s *session, tools []Tool) bool {
	init := s.cs.InitializeResult()
	if init == nil || init.Capabilities == nil || init.Capabilities.Resources == nil || !c.srv.wanted(readResource) {
		return false
	}
	for _, t := range tools {
		if t.remote == readResource {
			return false
		}
	}
	return true
}

// call runs one tool call; see Tool.CallProgress.
func (c *conn) call(ctx context.Context, remote string, args map[string]any, progress func(string)) (Result, error) {
	s, err := c.session(ctx)
	if err != nil {
		if errors.Is(err, ErrClosed) || ctx.Err() != nil {
			return Result{}, err
		}
		return c.errResult(err.Error()), nil
	}
	res, err := c.callOn(ctx, s, remote, args, progress)
	if err != nil && c.neverRan(err) && ctx.Err() == nil {
		// An HTTP server that restarted no longer knows our session and
		// refuses the request before running it: reconnect, and send it
		// once more.
		c.m.log.Info("mcp server lost our session; reconnecting to send the call again", "server", c.srv.Name, "tool", remote)
		c.mu.Lock()
		if c.sess == s {
			c.drop("session lost: " + err.Error())
			c.nextTry = time.Time{}
		}
		c.mu.Unlock()
		if s, err = c.session(ctx); err != nil {
			if errors.Is(err, ErrClosed) || ctx.Err() != nil {
				return Result{}, err
			}
			return c.errResult(err.Error()), nil
		}
		res, err = c.callOn(ctx, s, remote, args, progress)
	}
	if err == nil {
		c.mu.Lock()
		c.ok()
		c.mu.Unlock()
		return toResult(res, c.m.opts.MaxResultBytes, c.redact), nil
	}
	return c.callFailed(ctx, s, remote, err)
}

// callOn sends the call on session s with a progress token: each
// notifications/progress the server sends for it goes to progress and
// gives the call the server's timeout again, up to its max_timeout in all.
func (c *conn) callOn(ctx context.Context, s *session, remote string, args map[string]any, progress func(string)) (*sdk.CallToolResult, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// While the person is asked for input the server requested, the call
	// is waiting for them, not for the server: it gets its timeout again
	// from their answer.
	var idle atomic.Pointer[time.Timer] // set before it can fire but a nanosecond timeout
	idle.Store(time.AfterFunc(c.srv.Timeout, func() {
		if wait, d := c.waitsForPerson(); wait {
			if t := idle.Load(); t != nil {
				t.Reset(d)
				return
			}
		}
		cancel(errIdle)
	}))
	defer idle.Load().Stop()
	most := time.AfterFunc(c.srv.MaxTimeout, func() { cancel(errTooLong) })
	defer most.Stop()
	token := fmt.Sprintf("agentbot-%d", callSeq.Add(1))
	// A notification handled after the answer (the go-sdk handles them
	// asynchronously) must not report progress of a finished call.
	var mu sync.Mutex
	done := false
	c.progress.Store(token, func(p *sdk.ProgressNotificationParams) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		idle.Load().Reset(c.srv.Timeout)
		if progress != nil {
			progress(progressText(remote, p))
		}
	})
	defer func() {
		c.progress.Delete(token)
		mu.Lock()
		done = true
		mu.Unlock()
	}()
	params := &sdk.CallToolParams{Name: remote, Arguments: args}
	params.SetProgressToken(token)
	res, err := s.cs.CallTool(cctx, params)
	if err != nil && ctx.Err() == nil && cctx.Err() != nil {
		return nil, context.Cause(cctx)
	}
	return res, err
}

// callSeq numbers the progress tokens of the calls.
var callSeq atomic.Int64

// The causes of a call's end for want of an answer.
var (
	errIdle    = errors.New("no answer or progress within the timeout")
	errTooLong = errors.New("not done within max_timeout")
)

// progressText is the status line of a progress notification.
func progressText(tool string, p *sdk.ProgressNotificationParams) string {
	var b strings.Builder
	b.WriteString(tool)
	if m := clean(strings.Join(strings.Fields(p.Message), " "), 200); m != "" {
		b.WriteString(": " + m)
	}
	switch {
	case p.Total > 0:
		fmt.Fprintf(&b, " (%.0f%%)", min(100, 100*p.Progress/p.Total))
	case p.Progress > 0:
		fmt.Fprintf(&b, " (%g)", p.Progress)
	}
	return b.String()
}

// neverRan reports whether err means a call was refused before the server
// ran it: an HTTP server that no longer knows our session answers 404
// (the spec, https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management)
// or, like the TypeScript SDK's, 400 "Bad Request: No valid session ID".
func (c *conn) neverRan(err error) bool {
	if c.srv.Transport != TransportHTTP {
		return false
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return false
	}
	return errors.Is(err, sdk.ErrSessionMissing) || strings.HasSuffix(err.Error(), ": Bad Request")
}

// callFailed is the result of a call that failed for want of an answer
// or a broken connection. A call that timed out is cancelled; a server
// that still answers a ping keeps its session, and with it its state. One
// that does not is restarted, and the result says what that loses.
func (c *conn) callFailed(ctx context.Context, s *session, remote string, err error) (Result, error) {
	if ctx.Err() != nil { // the caller gave up; the server is not to blame
		return Result{}, ctx.Err()
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) { // the server answered with an error: it is alive
		return c.errResult(fmt.Sprintf("tool %s: %s", remote, werr.Message)), nil
	}
	why := err.Error()
	switch {
	case errors.Is(err, errIdle):
		why = fmt.Sprintf("no answer within %s", c.srv.Timeout)
	case errors.Is(err, errTooLong):
		why = fmt.Sprintf("not done within max_timeout %s", c.srv.MaxTimeout)
	case strings.Contains(why, "exceeded the configured maximum"), strings.Contains(why, "SSE event exceeded"):
		why = fmt.Sprintf("its answer is larger than %s, more than agentbot reads", sizeText(c.m.opts.MaxFrameBytes))
	}
	timedOut := errors.Is(err, errIdle) || errors.Is(err, errTooLong)
	if timedOut {
		pctx, cancel := context.WithTimeout(c.m.bg, min(c.srv.Timeout, 5*time.Second))
		perr := s.cs.Ping(pctx, nil)
		cancel()
		if perr == nil {
			return c.errResult(fmt.Sprintf("tool %s: %s; the call was cancelled (the server still answers, so it keeps its state)", remote, why)), nil
		}
	}
	c.mu.Lock()
	if c.sess == s {
		c.drop(why)
	}
	c.mu.Unlock()
	lost := "the server will be reconnected"
	if c.srv.Transport == TransportStdio {
		lost = "the server will be reconnected, started afresh: whatever it kept from earlier calls (open files, sessions, memory) is lost"
	}
	return c.errResult(fmt.Sprintf("tool %s: %s; %s", remote, why, lost)), nil
}

// sizeText renders a byte count ("128 MiB").
func sizeText(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
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
	sniff   func(line []byte) // shown the lines of each answer (see sniffer)
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
	resp, err := h.base.RoundTrip(r)
	if err == nil && h.sniff != nil && resp.Body != nil {
		resp.Body = sniffBody{Reader: &sniffer{r: resp.Body, note: h.sniff}, Closer: resp.Body}
	}
	return resp, err
}

// sniffBody is an answer's body read through a sniffer.
type sniffBody struct {
	io.Reader
	io.Closer
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
