package mcp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
	"agentbot/engine/mcp/oauth"
	"agentbot/engine/retry"
)

// session is one live connection to a server.
type session struct {
	cs   *sdk.ClientSession
	cmd  *exec.Cmd // stdio only
	dead chan struct{}
	// counted is set for a person's session, which holds room under
	// Options.MaxSessions until it is closed; evicted when it was closed
	// to make room for another.
	counted, evicted bool
}

func (s *session) close() {
	_ = s.cs.Close()
	if s.cmd != nil {
		killGroup(s.cmd)
	}
}

// link is the session of one server for one identity: the one session of
// a server, or one person's at an identity user server. Its fields are
// guarded by its conn's mu, unless atomic.
type link struct {
	c   *conn
	who Identity

	sess     *session
	failures int       // consecutive failures
	nextTry  time.Time // no connect before this
	lastErr  string
	// connecting and listing are the background connect and listing under
	// way, nil when none is.
	connecting, listing *flight
	// calls counts the calls under way; used is when the link was last
	// used (see Manager.janitor).
	calls int
	used  time.Time
	// authLogged is the last authorization error logged, so each is
	// logged once.
	authLogged string

	// authErr is the last authorization error of a request (read after a
	// failed connect or call).
	authErr atomic.Pointer[error]
	// asking counts the server's requests for input being answered;
	// askedAt is when the last one was answered (UnixNano).
	asking  atomic.Int32
	askedAt atomic.Int64
	// askers are the Asks of the calls under way (their persons answer
	// what the server asks meanwhile), the latest last.
	askMu  sync.Mutex
	askSeq uint64
	askers []askerEntry
}

// session returns a live session, waiting until ctx ends for a
// background connect when there is none.
func (l *link) session(ctx context.Context) (*session, error) {
	c := l.c
	c.mu.Lock()
	s, f, err := l.sessionOrConnect()
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
	if l.sess == nil {
		return nil, c.errorf("connection lost right after connecting")
	}
	return l.sess, nil
}

// sessionOrConnect returns the live session, or else the background
// connect that makes one (starting it when none is under way), or else why
// the server is not tried now (closed, backing off). c.mu held.
func (l *link) sessionOrConnect() (*session, *flight, error) {
	c := l.c
	if c.m.isClosed() {
		return nil, nil, ErrClosed
	}
	if l.sess != nil {
		select {
		case <-l.sess.dead:
			l.drop("connection lost")
		default:
			return l.sess, nil, nil
		}
	}
	if l.connecting != nil {
		return nil, l.connecting, nil
	}
	if wait := time.Until(l.nextTry); wait > 0 {
		return nil, nil, c.errorf("unavailable after %d failures (last: %s); next try in %s", l.failures, l.lastErr, wait.Round(time.Millisecond))
	}
	if !c.m.track() {
		return nil, nil, ErrClosed
	}
	f := &flight{done: make(chan struct{}), started: time.Now()}
	l.connecting = f
	go l.runConnect(f)
	return nil, f, nil
}

// runConnect connects in the background, within the server's timeout, and
// makes the result the current session.
func (l *link) runConnect(f *flight) {
	c := l.c
	defer c.m.flights.Done()
	ctx, cancel := context.WithTimeout(c.m.bg, c.srv.Timeout)
	defer cancel()
	l.authErr.Store(nil)
	s, err := l.open(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(f.done)
	l.connecting = nil
	l.used = time.Now()
	switch {
	case err != nil && c.m.bg.Err() != nil:
		f.err = ErrClosed
	case errors.Is(err, errNoRoom): // not the server's failure
		f.err = c.errorf("%s", err)
	case err != nil:
		f.err = l.failConnect(ctx, err)
	case c.m.isClosed(): // Close ran while we connected
		c.m.closeSession(s)
		f.err = ErrClosed
	default:
		l.sess = s
		if !c.user {
			c.tools = nil
		}
		c.m.log.Info("mcp server connected", "server", c.srv.Name, "transport", c.srv.Transport, "identity", l.who.String())
	}
}

// open connects; a person's session first takes room under
// Options.MaxSessions, and gives it back when it fails.
func (l *link) open(ctx context.Context) (*session, error) {
	if !l.c.user {
		return l.connect(ctx)
	}
	if err := l.c.m.room.take(ctx, l.c.m.evictIdle); err != nil {
		return nil, err
	}
	s, err := l.connect(ctx)
	if err != nil {
		l.c.m.room.release(false)
		return nil, err
	}
	s.counted = true
	return s, nil
}

// failConnect records a failed connect and returns its error; one that
// needs authorization wraps ErrAuthorizationNeeded. c.mu held.
func (l *link) failConnect(ctx context.Context, err error) error {
	c := l.c
	if ae := l.authErr.Swap(nil); ae != nil {
		err = *ae // the SDK's error may not wrap it
	} else if ctx.Err() != nil {
		err = fmt.Errorf("no answer within %s", c.srv.Timeout)
	}
	if errors.Is(err, ErrAuthorizationNeeded) {
		l.failAuth(err.Error())
		return c.authErrorf("connect: %s", err)
	}
	l.fail(err.Error())
	return c.errorf("connect: %s", err)
}

// fail records a failure and schedules the next connect. c.mu held.
func (l *link) fail(why string) {
	c := l.c
	l.failures++
	l.lastErr = c.redact(why)
	delay := time.Duration(0)
	if l.failures > 1 {
		delay = retry.Policy{Base: c.m.opts.BackoffBase, Max: c.m.opts.BackoffMax}.Backoff(l.failures - 1)
	}
	l.nextTry = time.Now().Add(delay)
	c.failing = true
	c.m.log.Warn("mcp server failed", "server", c.srv.Name, "identity", l.who.String(), "failures", l.failures, "retry_in", delay, "error", l.lastErr)
}

// failAuth is fail for a server that needs authorization: the reason is
// logged once, not at every try. A shared session backs off; a person's
// does not, since it is only tried again once they are connected (their
// calls wait for that, and their listings offer the connect tool). c.mu
// held.
func (l *link) failAuth(why string) {
	c := l.c
	why = c.redact(why)
	if l.authLogged != why {
		l.authLogged = why
		lvl := slog.LevelWarn
		if c.user {
			lvl = slog.LevelInfo // a person who has not connected yet
		}
		c.m.log.Log(context.Background(), lvl, "mcp server needs authorization", "server", c.srv.Name, "identity", l.who.String(), "reason", why)
	}
	l.failures++
	l.lastErr = why
	if !c.user {
		l.nextTry = time.Now().Add(retry.Policy{Base: c.m.opts.BackoffBase, Max: c.m.opts.BackoffMax}.Backoff(l.failures))
	}
}

// httpTransport is the transport of the session's HTTP requests, by its
// identity (see newAuthRT): for identity user and service, the
// Authorizer's tokens of l.who.
func (l *link) httpTransport() http.RoundTripper {
	c := l.c
	var a Authorizer
	var noAuth error
	switch l.who.Kind {
	case IdentityUser, IdentityService:
		a = c.m.opts.Authorizer
		noAuth = fmt.Errorf("%w: identity %s needs an authorizer, and none is configured", ErrAuthorizationNeeded, l.who.Kind)
	}
	return newAuthRT(c.srv, l.who, a, noAuth, c.noteTaskTools, authHooks{
		asked: func() { c.asksAuth.Store(true) },
		failed: func(err error, sent oauth.Token) {
			l.authErr.Store(&err)
			if c.user && sent.AccessToken != "" && errors.Is(err, ErrAuthorizationNeeded) {
				c.refused.Store(l.who, digest(sent.AccessToken))
			}
		},
	})
}

// digest is the SHA-256 of a token: what is kept of one the server
// refused.
func digest(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// drop closes the current session so the next use reconnects, and
// records the failure. c.mu held.
func (l *link) drop(why string) {
	if l.sess == nil {
		return
	}
	l.closeSession()
	l.fail(why)
}

// closeSession closes the current session, if any, without counting a
// failure. c.mu held.
func (l *link) closeSession() {
	if l.sess == nil {
		return
	}
	l.c.m.closeSession(l.sess)
	l.sess = nil
	if !l.c.user {
		l.c.tools = nil
	}
}

// ok resets the failure count after a successful exchange. c.mu held.
func (l *link) ok() {
	l.failures = 0
	l.nextTry = time.Time{}
	l.c.failing = false
}

// cold reports whether the server has never listed its tools in this
// process and neither it nor this link has failed: a turn waits for it up
// to its timeout, not the budget, so the first turn of a fresh process
// gets its tools. One that has failed once is known to be failing, and
// costs a turn only the budget, a new person's included. c.mu held.
func (l *link) cold() bool {
	return l.c.known == nil && !l.c.failing && l.failures == 0 && l.lastErr == ""
}

// live reports whether the current session is up. c.mu held.
func (l *link) live() bool {
	if l.sess == nil {
		return false
	}
	select {
	case <-l.sess.dead:
		return false
	default:
		return true
	}
}

// busy reports whether the link is in use: a call, connect or listing
// under way, or a person being asked for input. c.mu held.
func (l *link) busy() bool {
	return l.calls > 0 || l.connecting != nil || l.listing != nil || l.asking.Load() > 0
}

func (l *link) connect(ctx context.Context) (*session, error) {
	c := l.c
	client := sdk.NewClient(&sdk.Implementation{Name: "agentbot", Version: "1"}, &sdk.ClientOptions{
		Logger: discardLogger,
		// Only what agentbot supports: no roots, no sampling; elicitation
		// (form mode) when there is an Elicit hook, which the SDK adds to
		// these from the handler.
		Capabilities:         &sdk.ClientCapabilities{},
		ElicitationHandler:   l.elicitHandler(),
		CreateMessageHandler: l.samplingHandler(),
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
		rt := l.httpTransport()
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
