package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
	// up to its timeout instead. An identity user server with a known
	// list is not waited for at all: a person whose session is new gets
	// the server's list at once, and the session opens on their first
	// call.
	ListBudget time.Duration
	// Elicit asks the person a tool call acts for what a server requests
	// in the middle of the call (elicitation/create, form mode). With it,
	// the client declares elicitation, and a call's timeout does not run
	// while the person is asked; without it, elicitation is not declared.
	Elicit ElicitFunc
	// AskPeople declares elicitation and sends what a server asks during
	// a call to the engine's Ask of that call (engine.ExternalCall.Ask:
	// the person the call acts for, in the thread or the terminal); Elicit
	// answers what no call of the session can.
	AskPeople bool
	// Authorizer gives the HTTP servers with identity user or service
	// their OAuth tokens: for identity service the one shared identity's,
	// for identity user those of the person each session acts as. Without
	// it, such a server that asks for authorization is unavailable,
	// saying so.
	Authorizer Authorizer
	// IdleTimeout closes a person's session (identity user) that has not
	// been used for this long (default 10m); their next use opens a new
	// one. The one session of any other server stays open.
	IdleTimeout time.Duration
	// MaxSessions caps the live per-person sessions (identity user) of the
	// Manager, all servers together (default 256). Opening one more first
	// closes the least recently used idle one; when every one is busy, the
	// new one waits, up to its server's timeout, for one to become idle. A
	// call under way is never cut. The one session of any other server is
	// not counted: the config bounds those.
	MaxSessions int
}

// Defaults of Options.
const (
	// DefaultListBudget is Options.ListBudget's default.
	DefaultListBudget = 150 * time.Millisecond
	// DefaultIdleTimeout is Options.IdleTimeout's default.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultMaxSessions is Options.MaxSessions's default.
	DefaultMaxSessions = 256
)

// ErrClosed is returned by calls on a closed Manager.
var ErrClosed = errors.New("mcp manager closed")

// Manager owns the sessions to the configured servers: one per server and
// identity (one per person for an identity user server, else one), each
// opened on first use and reconnected with backoff after a failure. It is
// safe for concurrent use. Close stops every stdio server it started.
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

	// room counts the live per-person sessions against MaxSessions.
	room room
}

// NewManager returns a Manager for the usable servers of cfg. Nothing is
// started until a server's tools are listed or called.
func NewManager(cfg *Config, opts Options) *Manager {
	if cfg == nil {
		cfg = &Config{}
	}
	opts = withDefaults(opts, cfg)
	m := &Manager{cfg: cfg, opts: opts, log: opts.Logger, conns: map[string]*conn{}}
	m.room.max, m.room.freed = opts.MaxSessions, make(chan struct{})
	m.bg, m.stop = context.WithCancel(context.Background())
	people := false
	for i := range cfg.Servers {
		s := cfg.Servers[i] // a copy: a Server built in code may leave the timeouts out
		if s.Timeout <= 0 {
			s.Timeout = DefaultTimeout
		}
		if s.MaxTimeout <= 0 {
			s.MaxTimeout = DefaultMaxTimeout
		}
		s.MaxTimeout = max(s.MaxTimeout, s.Timeout)
		c := &conn{m: m, srv: &s, secrets: s.secrets(), user: IdentityOf(&s) == IdentityUser}
		if c.user {
			c.links = map[Identity]*link{}
			people = true
		} else {
			c.shared = &link{c: c, who: Identity{Kind: IdentityOf(&s)}}
		}
		m.conns[s.Name] = c
	}
	if people {
		m.flights.Add(1)
		go m.janitor()
	}
	return m
}

// withDefaults fills in the zero Options.
func withDefaults(opts Options, cfg *Config) Options {
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
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	return opts
}

// Close stops every server session; stdio servers are asked to exit (stdin
// closed), then signalled, then killed. It waits until they are gone, and
// for every connect and listing under way.
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
		for _, l := range c.all() {
			l.closeSession()
		}
		c.tools = nil
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

// closeSession closes s in the background; Close waits for it. A
// person's session gives its room back once it is closed.
func (m *Manager) closeSession(s *session) {
	m.closing.Add(1)
	go func() {
		defer m.closing.Done()
		s.close()
		if s.counted {
			m.room.release(s.evicted)
		}
	}()
}

// Tools lists the filtered tools of the named servers, in server order,
// waiting at most Options.ListBudget for them (all servers at once), or
// a server's timeout for one starting cold (see Options.ListBudget). A
// server that is unknown, unreachable, broken or still connecting gives a
// Problem (Unavailable) and no tools, or its last known tools with a
// Problem saying how old they are; the others are listed all the same.
// The tools of an identity user server act as nobody in particular (no
// team, no user); SessionTools binds them to a session's person.
func (m *Manager) Tools(ctx context.Context, servers []string) ([]Tool, []Problem) {
	return m.tools(ctx, servers, m.opts.ListBudget, Identity{})
}

// ToolsWait is Tools without the listing budget: it waits until each
// server answers or fails, or ctx ends (for commands such as agentbot
// agents).
func (m *Manager) ToolsWait(ctx context.Context, servers []string) ([]Tool, []Problem) {
	return m.tools(ctx, servers, 0, Identity{})
}

// Warm connects the named servers and lists their tools in the background,
// so the first turn that needs them finds them ready. An identity user
// server is left alone: a person's session opens on their first use.
func (m *Manager) Warm(servers []string) {
	names, _ := m.cfg.Resolve(servers)
	for _, n := range names {
		c := m.conns[n]
		if c.user {
			continue
		}
		c.mu.Lock()
		c.startList(c.shared)
		c.mu.Unlock()
	}
}

// tools is Tools with a budget (<= 0: wait until each server answers or
// fails, or ctx ends), acting as who at identity user servers.
func (m *Manager) tools(ctx context.Context, servers []string, budget time.Duration, who Identity) ([]Tool, []Problem) {
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
			l.tools, l.probs, l.err = m.conns[n].list(ctx, budget, who)
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

// conn is the state of one configured server: its sessions (links) and
// its tool list.
type conn struct {
	m       *Manager
	srv     *Server
	secrets []string
	// user is set for an identity user server: a link per person (links),
	// else the one link shared.
	user bool

	mu     sync.Mutex
	shared *link
	links  map[Identity]*link
	tools  []Tool // cached list; nil to list again (shared: on a new session)
	probs  []Problem
	stale  atomic.Bool // the server said its tool list changed
	// known is the last tool list the server gave (kept across sessions),
	// knownProbs its problems, knownAt when it was listed.
	known      []Tool
	knownProbs []Problem
	knownAt    time.Time
	// failing is set when the last exchange with the server, on any of
	// its sessions, failed (not for want of authorization): it is known
	// to be failing, and a new person's listing waits only the budget.
	failing bool
	// asksAuth is set once the server challenged a request (401, 403
	// insufficient_scope) or was sent a token: a person must then be
	// connected to use its tools.
	asksAuth atomic.Bool
	// refused holds, by person, the digest of the last token the server
	// refused (see connected).
	refused sync.Map
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

// all returns the links of the server. c.mu held.
func (c *conn) all() []*link {
	if !c.user {
		return []*link{c.shared}
	}
	out := make([]*link, 0, len(c.links))
	for _, l := range c.links {
		out = append(out, l)
	}
	return out
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

// authErrorf is errorf for an error that wraps ErrAuthorizationNeeded.
func (c *conn) authErrorf(format string, args ...any) error {
	return &authError{msg: c.errorf(format, args...).Error()}
}

// authError is an error about a server that needs authorization, its
// secrets scrubbed; it wraps ErrAuthorizationNeeded.
type authError struct{ msg string }

func (e *authError) Error() string { return e.msg }
func (e *authError) Unwrap() error { return ErrAuthorizationNeeded }

// list returns the server's filtered tools for who: from cache while
// the shared session is unchanged, else from a background listing it
// waits for at most budget from the listing's start (<= 0: until it
// ends), or the server's timeout when it starts cold. When the listing
// takes longer the last known tools are served, with a Problem giving
// their age; without any, the error says the server is still connecting.
// The Problems are for tools left out. An identity user server lists for
// who (see listFor).
func (c *conn) list(ctx context.Context, budget time.Duration, who Identity) ([]Tool, []Problem, error) {
	if c.user {
		return c.listFor(ctx, budget, who)
	}
	c.mu.Lock()
	if c.m.isClosed() {
		c.mu.Unlock()
		return nil, nil, ErrClosed
	}
	l := c.shared
	if c.tools != nil && !c.stale.Load() && l.live() {
		defer c.mu.Unlock()
		return c.tools, c.probs, nil
	}
	f := c.startList(l)
	budget = c.coldBudget(l, budget)
	c.mu.Unlock()
	return c.await(ctx, f, budget)
}

// coldBudget is the budget of a listing on l: with the server's timeout
// on top when l starts cold; the budget on top lets a connect that fails
// at its timeout report why. c.mu held.
func (c *conn) coldBudget(l *link, budget time.Duration) time.Duration {
	if budget > 0 && l.cold() {
		budget += c.srv.Timeout
	}
	return budget
}

// await waits for listing f at most budget from its start (<= 0: until
// it ends), and returns the server's list, or what lastKnown serves.
func (c *conn) await(ctx context.Context, f *flight, budget time.Duration) ([]Tool, []Problem, error) {
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
	} else if !c.user && c.shared.lastErr != "" {
		why = "not answering (last error: " + c.shared.lastErr + ")"
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

// startList returns the background listing on l under way, starting one
// if there is none; the list it gets becomes the server's. c.mu held.
func (c *conn) startList(l *link) *flight {
	if l.listing != nil {
		return l.listing
	}
	f := &flight{done: make(chan struct{}), started: time.Now()}
	if !c.m.track() { // closed: the flight ends at once
		f.err = ErrClosed
		close(f.done)
		return f
	}
	l.listing = f
	go func() {
		defer c.m.flights.Done()
		tools, probs, err := c.fetchTools(l)
		c.mu.Lock()
		defer c.mu.Unlock()
		defer close(f.done)
		l.listing = nil
		l.used = time.Now()
		if err != nil {
			f.err = err
			return
		}
		c.tools, c.probs = tools, probs
		c.known, c.knownProbs, c.knownAt = tools, probs, time.Now()
	}()
	return f
}

// fetchTools connects l if needed and lists the server's tools, within its
// timeout for each step.
func (c *conn) fetchTools(l *link) ([]Tool, []Problem, error) {
	ctx := c.m.bg
	s, err := l.session(ctx)
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
			if l.sess == s {
				l.drop("list tools: " + why)
			}
			c.mu.Unlock()
			return nil, nil, c.errorf("list tools: %s", why)
		}
		raw = append(raw, t)
	}
	c.mu.Lock()
	l.ok()
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

func (c *conn) errResult(msg string) Result {
	text := "mcp server " + c.srv.Name + ": " + clean(c.redact(msg), maxErrBytes)
	return Result{Text: text, IsError: true, Bytes: len(text)}
}
