package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// call runs one tool call as who (at an identity user server; the one
// session of any other); see Tool.CallProgress.
func (c *conn) call(ctx context.Context, who Identity, remote string, args map[string]any, progress func(string)) (Result, error) {
	l := c.use(who)
	defer c.done(l)
	return l.call(ctx, remote, args, progress)
}

// call runs one tool call on the link's session.
func (l *link) call(ctx context.Context, remote string, args map[string]any, progress func(string)) (Result, error) {
	c := l.c
	defer l.addAsker(askOf(ctx), sampleOf(ctx))()
	s, err := l.session(ctx)
	if err != nil {
		return l.unusable(ctx, remote, err)
	}
	res, err := l.callOn(ctx, s, remote, args, progress)
	if err != nil && c.neverRan(err) && ctx.Err() == nil {
		// An HTTP server that restarted no longer knows our session and
		// refuses the request before running it: reconnect, and send it
		// once more.
		c.m.log.Info("mcp server lost our session; reconnecting to send the call again", "server", c.srv.Name, "tool", remote)
		c.mu.Lock()
		if l.sess == s {
			l.drop("session lost: " + err.Error())
			l.nextTry = time.Time{}
		}
		c.mu.Unlock()
		if s, err = l.session(ctx); err != nil {
			return l.unusable(ctx, remote, err)
		}
		res, err = l.callOn(ctx, s, remote, args, progress)
	}
	if err == nil {
		l.authErr.Store(nil)
		c.mu.Lock()
		l.ok()
		c.mu.Unlock()
		return toResult(res, c.m.opts.MaxResultBytes, c.redact), nil
	}
	return l.callFailed(ctx, s, remote, err)
}

// unusable is the result of a call that got no session (err): an error
// for the caller when it gave up or the Manager is closed, else an error
// Result; a person whose account must be connected (again) is told so.
func (l *link) unusable(ctx context.Context, remote string, err error) (Result, error) {
	if errors.Is(err, ErrClosed) || ctx.Err() != nil {
		return Result{}, err
	}
	if l.c.user && errors.Is(err, ErrAuthorizationNeeded) {
		return l.connectAgain(remote, err.Error()), nil
	}
	return l.c.errResult(err.Error()), nil
}

// refusedAuth reports whether a call of a person's session failed for
// want of authorization: the server refused their token, and it could
// not be renewed.
func (l *link) refusedAuth(err error) bool {
	if !l.c.user {
		return false
	}
	if errors.Is(err, ErrAuthorizationNeeded) {
		return true
	}
	ae := l.authErr.Load()
	return ae != nil && errors.Is(*ae, ErrAuthorizationNeeded)
}

// authReason is why a call was refused authorization, for the person.
func (l *link) authReason(err error) string {
	if ae := l.authErr.Load(); ae != nil {
		return (*ae).Error()
	}
	return err.Error()
}

// connectAgain is the result of a call whose person's account at the
// server must be connected (again): the server refused their token and it
// could not be renewed. The next call of the server's tools waits for the
// person to connect (see Tool.External).
func (l *link) connectAgain(remote, why string) Result {
	return l.c.errResult(fmt.Sprintf("tool %s: the user's account at %s must be connected again (%s); the next call of its tools asks them to connect it",
		remote, l.c.srv.Name, why))
}

// callOn sends the call on session s with a progress token: each
// notifications/progress the server sends for it goes to progress and
// gives the call the server's timeout again, up to its max_timeout in all.
func (l *link) callOn(ctx context.Context, s *session, remote string, args map[string]any, progress func(string)) (*sdk.CallToolResult, error) {
	c := l.c
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// While the person is asked for input the server requested, the call
	// is waiting for them, not for the server: it gets its timeout again
	// from their answer.
	var idle atomic.Pointer[time.Timer] // set before it can fire but a nanosecond timeout
	idle.Store(time.AfterFunc(c.srv.Timeout, func() {
		if wait, d := l.waitsForPerson(); wait {
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
func (l *link) callFailed(ctx context.Context, s *session, remote string, err error) (Result, error) {
	c := l.c
	if ctx.Err() != nil { // the caller gave up; the server is not to blame
		return Result{}, ctx.Err()
	}
	if l.refusedAuth(err) {
		c.mu.Lock()
		if l.sess == s {
			l.closeSession()
		}
		c.mu.Unlock()
		return l.connectAgain(remote, l.authReason(err)), nil
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
	if l.sess == s {
		l.drop(why)
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
