package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// The sessions of an identity user server, one per person: each opens on
// the person's first use, closes after Options.IdleTimeout unused, and
// holds room under Options.MaxSessions while it lives. The server's tool
// list is shared by all: listed on the session of whoever needs it first,
// refreshed in the background, and bound to each person who lists it.

// person is who as the key of a person's session.
func person(who Identity) Identity {
	return Identity{Kind: IdentityUser, Team: who.Team, User: who.User}
}

// linkOf returns the link of who: the shared one, or the person's, made
// on first use. c.mu held.
func (c *conn) linkOf(who Identity) *link {
	if !c.user {
		return c.shared
	}
	who = person(who)
	l := c.links[who]
	if l == nil {
		l = &link{c: c, who: who, used: time.Now()}
		c.links[who] = l
	}
	return l
}

// use returns who's link, counting a call under way on it (which keeps
// it from being closed) until done.
func (c *conn) use(who Identity) *link {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.linkOf(who)
	l.calls++
	l.used = time.Now()
	return l
}

// done ends a call counted by use.
func (c *conn) done(l *link) {
	c.mu.Lock()
	l.calls--
	l.used = time.Now()
	c.mu.Unlock()
	if c.user {
		c.m.room.wake() // an idle session may now make room
	}
}

// listFor lists an identity user server's tools for who. With a known
// list it is served at once, bound to who, without waiting for any
// session (one the server said changed is listed again in the
// background, on a live session). Without one, a person who is not
// connected to a server that wants authorization gets the connect tool
// alone; anyone else's session lists the tools, waited for as list does.
// A listing refused for want of authorization also gives the connect
// tool, when there is an Authorizer to connect with.
func (c *conn) listFor(ctx context.Context, budget time.Duration, who Identity) ([]Tool, []Problem, error) {
	c.mu.Lock()
	if c.m.isClosed() {
		c.mu.Unlock()
		return nil, nil, ErrClosed
	}
	if c.known != nil {
		if c.stale.Load() {
			c.refresh(who)
		}
		tools, probs := c.bind(c.known, who), c.knownProbs
		c.mu.Unlock()
		return tools, probs, nil
	}
	c.mu.Unlock()
	canConnect := c.m.opts.Authorizer != nil
	if canConnect && c.asksAuth.Load() && !c.connected(ctx, who) {
		return []Tool{c.connectTool(who)}, nil, nil
	}
	c.mu.Lock()
	l := c.linkOf(who)
	f := c.startList(l)
	budget = c.coldBudget(l, budget)
	c.mu.Unlock()
	tools, probs, err := c.await(ctx, f, budget)
	if canConnect && errors.Is(err, ErrAuthorizationNeeded) {
		return []Tool{c.connectTool(who)}, nil, nil
	}
	return c.bind(tools, who), probs, err
}

// refresh lists the server's tools again in the background, on who's
// session if it is live, else on any live one; with none, the list stays
// as it is until someone's session is up. c.mu held.
func (c *conn) refresh(who Identity) {
	l := c.links[person(who)]
	if l == nil || !l.live() {
		l = nil
		for _, o := range c.links {
			if o.live() {
				l = o
				break
			}
		}
	}
	if l != nil {
		c.startList(l)
	}
}

// bind returns tools acting as who.
func (c *conn) bind(tools []Tool, who Identity) []Tool {
	if tools == nil {
		return nil
	}
	who = person(who)
	out := make([]Tool, len(tools))
	for i, t := range tools {
		t.who = who
		out[i] = t
	}
	return out
}

// connected reports whether who may use the server's tools as far as
// authorization goes: without an Authorizer, yes (nothing could connect
// them); else when the Authorizer gives them a token that the server has
// not refused since. An Authorizer that fails otherwise (its store) counts
// as connected: the call says what failed, and connecting would not help.
func (c *conn) connected(ctx context.Context, who Identity) bool {
	a := c.m.opts.Authorizer
	if a == nil {
		return true
	}
	who = person(who)
	t, err := a.Token(ctx, c.srv, who)
	switch {
	case errors.Is(err, ErrAuthorizationNeeded):
		return false
	case err != nil:
		return true
	case t.AccessToken == "":
		return false
	}
	if d, ok := c.refused.Load(who); ok {
		if d.([32]byte) == digest(t.AccessToken) {
			return false
		}
		c.refused.Delete(who) // connected again since
	}
	return true
}

// connectAccount is the own name of the tool offered in place of an
// identity user server's tools to a person who must connect first.
const connectAccount = "connect_account"

// connectTool is the tool that stands for the server's tools until who
// has connected their account: calling it waits for them to connect
// (Tool.External's NeedsConnection), then lists the tools.
func (c *conn) connectTool(who Identity) Tool {
	return Tool{
		Name: toolName(c.srv.Name, connectAccount), Server: c.srv.Name, Policy: PolicyAuto,
		Description: "Connect the user's account at " + c.srv.Name + " (an MCP server). Its tools act as the user, " +
			"with their own account, so they become available once the user has connected it. Call this to ask the user to connect.",
		Schema:  json.RawMessage(`{"type":"object","properties":{}}`),
		connect: true, who: person(who), c: c,
	}
}

// connectCall runs the connect tool once who has connected: it lists the
// server's tools and says they are available.
func (c *conn) connectCall(ctx context.Context, who Identity) (Result, error) {
	if !c.connected(ctx, who) {
		return c.errResult("the user's account is not connected; its tools are not available"), nil
	}
	tools, _, err := c.listFor(ctx, 0, who)
	switch {
	case errors.Is(err, ErrClosed) || ctx.Err() != nil:
		return Result{}, errors.Join(err, ctx.Err())
	case err != nil:
		return c.errResult(err.Error()), nil
	}
	var names []string
	for _, t := range tools {
		if !t.connect {
			names = append(names, t.Name)
		}
	}
	if len(names) == 0 && len(tools) > 0 {
		return c.errResult("the user's account is not connected; its tools are not available"), nil
	}
	text := fmt.Sprintf("The user's account at %s is connected: its tools are available now (%d): %s.", c.srv.Name, len(names), strings.Join(names, ", "))
	return Result{Text: text, Bytes: len(text)}, nil
}

// room counts the live per-person sessions against Options.MaxSessions.
type room struct {
	mu  sync.Mutex
	max int
	// live counts the sessions open or opening; evicting those closed to
	// make room and not gone yet; waiting those waiting for room.
	live, evicting, waiting int
	// freed is closed and replaced when room may have been freed (a
	// session closed, a call ended) while someone waits.
	freed chan struct{}
}

// errNoRoom is the error of a person's session that found no room: every
// live one is busy.
var errNoRoom = errors.New("no room for another person's session")

// take takes room for one session: at once when there is some; else it
// has evict close an idle session (one eviction under way per waiter;
// evict counts it in evicting), and waits for room until ctx ends.
func (r *room) take(ctx context.Context, evict func() bool) error {
	for {
		r.mu.Lock()
		if r.live < r.max {
			r.live++
			r.mu.Unlock()
			return nil
		}
		ch := r.freed
		r.waiting++
		short := r.evicting < r.waiting
		r.mu.Unlock()
		if short {
			evict()
		}
		select {
		case <-ch:
		case <-ctx.Done():
		}
		r.mu.Lock()
		r.waiting--
		r.mu.Unlock()
		if ctx.Err() != nil {
			return fmt.Errorf("%w: all %d are busy (Options.MaxSessions)", errNoRoom, r.max)
		}
	}
}

// release gives back the room of a closed session; evicted says it was
// closed to make room.
func (r *room) release(evicted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live--
	if evicted {
		r.evicting--
	}
	r.wakeLocked()
}

// wake tells those waiting for room to look again.
func (r *room) wake() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wakeLocked()
}

func (r *room) wakeLocked() {
	if r.waiting > 0 {
		close(r.freed)
		r.freed = make(chan struct{})
	}
}

// sessions is the number of live per-person sessions.
func (r *room) sessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live
}

// evictIdle closes the least recently used idle person's session of the
// Manager, to make room for another; false when every one is busy.
func (m *Manager) evictIdle() bool {
	var victim *link
	var vs *session
	var at time.Time
	for _, c := range m.conns {
		if !c.user {
			continue
		}
		c.mu.Lock()
		for _, l := range c.links {
			if l.sess != nil && !l.busy() && (victim == nil || l.used.Before(at)) {
				victim, vs, at = l, l.sess, l.used
			}
		}
		c.mu.Unlock()
	}
	if victim == nil {
		return false
	}
	c := victim.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if victim.sess != vs || victim.busy() || m.isClosed() {
		return false
	}
	vs.evicted = true
	m.room.mu.Lock()
	m.room.evicting++
	m.room.mu.Unlock()
	m.log.Info("mcp session closed to make room for another person's", "server", c.srv.Name, "identity", victim.who.String(),
		"idle", time.Since(at).Round(time.Millisecond))
	victim.closeSession()
	return true
}

// janitor closes the sessions of people idle for Options.IdleTimeout, and
// forgets their links, until the Manager closes.
func (m *Manager) janitor() {
	defer m.flights.Done()
	every := min(max(m.opts.IdleTimeout/4, 5*time.Millisecond), time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.bg.Done():
			return
		case now := <-t.C:
			for _, c := range m.conns {
				if c.user {
					c.sweep(now)
				}
			}
		}
	}
}

// sweep closes the sessions idle since before now-IdleTimeout, and
// forgets the links that have nothing left to do. A busy link is never
// touched.
func (c *conn) sweep(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m.isClosed() {
		return
	}
	for who, l := range c.links {
		if l.busy() || now.Sub(l.used) < c.m.opts.IdleTimeout {
			continue
		}
		if l.sess != nil {
			c.m.log.Debug("mcp session idle; closed", "server", c.srv.Name, "identity", who.String())
			l.closeSession()
		}
		if now.After(l.nextTry) {
			delete(c.links, who)
		}
	}
}
