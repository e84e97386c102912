package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agentbot/engine"
)

// Elicitation is a server asking, in the middle of one of its tool calls,
// for input from the person the call acts for: elicitation/create in
// form mode (https://modelcontextprotocol.io/specification/2025-11-25/client/elicitation).
type Elicitation struct {
	// Server is the configured name of the server asking.
	Server string
	// Who is the identity of the session the server asks on: at an
	// identity user server, the person it acts as.
	Who Identity
	// Message is what the server asks, in its own words (secrets of the
	// server's config scrubbed).
	Message string
	// Schema is the requested schema: a JSON object schema whose
	// properties are strings, numbers, integers, booleans or enums, each
	// perhaps with a default (see SchemaDefaults).
	Schema json.RawMessage
}

// The actions of an ElicitAnswer.
const (
	ElicitAccept  = "accept"  // the person answered: Content holds the values
	ElicitDecline = "decline" // the person said no
	ElicitCancel  = "cancel"  // the person dismissed the question without choosing
)

// ElicitAnswer is the answer to an Elicitation.
type ElicitAnswer struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action string
	// Content holds the values by property name, with ElicitAccept.
	Content map[string]any
}

// ElicitFunc asks the person for what e requests and returns their answer,
// or an error when nobody can be asked (the server gets it as an error).
// ctx ends when the server withdraws the request or the session closes.
type ElicitFunc func(ctx context.Context, e Elicitation) (ElicitAnswer, error)

// SchemaDefaults returns the default value of each property of a requested
// schema that has one: the values a form starts with, and what an
// unattended client accepts. Properties without a default are left out.
func SchemaDefaults(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	out := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return out
	}
	for name, p := range s.Properties {
		if p.Default != nil {
			out[name] = p.Default
		}
	}
	return out
}

// elicitHandler is the go-sdk's elicitation handler for this server: it
// passes form requests to Options.Elicit, and keeps the server's calls
// under way from timing out while the person is asked. nil when there is
// no Elicit hook: then the client does not declare elicitation.
func (l *link) elicitHandler() func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	c := l.c
	if c.m.opts.Elicit == nil && !c.m.opts.AskPeople {
		return nil
	}
	ask := func(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
		if a := l.asker(); a != nil {
			return a(ctx, e)
		}
		if c.m.opts.Elicit != nil {
			return c.m.opts.Elicit(ctx, e)
		}
		return ElicitAnswer{}, errors.New("no call of this session can ask its person")
	}
	return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		p := req.Params
		if p.Mode != "" && p.Mode != "form" {
			// URL mode is not declared; a server that asks anyway is told no.
			return &sdk.ElicitResult{Action: ElicitDecline}, nil
		}
		schema, err := json.Marshal(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("elicitation from %s: requested schema: %w", c.srv.Name, err)
		}
		l.asking.Add(1)
		defer func() {
			l.askedAt.Store(time.Now().UnixNano())
			l.asking.Add(-1)
		}()
		c.m.log.Info("mcp server asks for input", "server", c.srv.Name, "message", clean(c.redact(p.Message), 200))
		a, err := ask(ctx, Elicitation{Server: c.srv.Name, Who: l.who, Message: clean(c.redact(p.Message), maxErrBytes), Schema: schema})
		if err != nil {
			c.m.log.Warn("mcp server's request for input unanswered", "server", c.srv.Name, "error", c.redact(err.Error()))
			return nil, fmt.Errorf("elicitation from %s: %w", c.srv.Name, err)
		}
		switch a.Action {
		case ElicitAccept, ElicitDecline, ElicitCancel:
		default:
			return nil, fmt.Errorf("elicitation from %s: unknown action %q", c.srv.Name, a.Action)
		}
		c.m.log.Info("mcp server's request for input answered", "server", c.srv.Name, "action", a.Action)
		res := &sdk.ElicitResult{Action: a.Action}
		if a.Action == ElicitAccept {
			res.Content = a.Content
			if res.Content == nil {
				res.Content = map[string]any{}
			}
		}
		return res, nil
	}
}

// askKey is the context key of the engine's Ask of a call (withAsk).
type askKey struct{}

// withAsk gives the call of ctx the engine's Ask, so that what the server
// asks during it goes to the call's person.
func withAsk(ctx context.Context, ask func(context.Context, engine.Question) (engine.Answer, error)) context.Context {
	if ask == nil {
		return ctx
	}
	return context.WithValue(ctx, askKey{}, ElicitFunc(func(ctx context.Context, e Elicitation) (ElicitAnswer, error) {
		a, err := ask(ctx, engine.Question{Source: e.Server, Message: e.Message, Schema: e.Schema})
		return ElicitAnswer{Action: a.Action, Content: a.Values}, err
	}))
}

// askOf is the Ask withAsk gave ctx's call; nil when none.
func askOf(ctx context.Context) ElicitFunc {
	a, _ := ctx.Value(askKey{}).(ElicitFunc)
	return a
}

// addAsker makes a (and sample) the asker of the link's session while
// its call runs (the latest call's first); the returned func removes it.
func (l *link) addAsker(a ElicitFunc, sample func(context.Context, engine.Sampling) (engine.SamplingReply, error)) func() {
	if a == nil && sample == nil {
		return func() {}
	}
	l.askMu.Lock()
	defer l.askMu.Unlock()
	l.askSeq++
	id := l.askSeq
	l.askers = append(l.askers, askerEntry{id, a, sample})
	return func() {
		l.askMu.Lock()
		defer l.askMu.Unlock()
		l.askers = slices.DeleteFunc(l.askers, func(e askerEntry) bool { return e.id == id })
	}
}

// asker is the Ask of the link's latest call under way; nil when none.
func (l *link) asker() ElicitFunc {
	l.askMu.Lock()
	defer l.askMu.Unlock()
	for i := len(l.askers) - 1; i >= 0; i-- {
		if a := l.askers[i].ask; a != nil {
			return a
		}
	}
	return nil
}

// sampler is the Sample of the link's latest call under way; nil when
// none.
func (l *link) sampler() func(context.Context, engine.Sampling) (engine.SamplingReply, error) {
	l.askMu.Lock()
	defer l.askMu.Unlock()
	for i := len(l.askers) - 1; i >= 0; i-- {
		if s := l.askers[i].sample; s != nil {
			return s
		}
	}
	return nil
}

// askerEntry is one call's Ask and Sample on a link.
type askerEntry struct {
	id     uint64
	ask    ElicitFunc
	sample func(context.Context, engine.Sampling) (engine.SamplingReply, error)
}

// waitsForPerson reports whether the server's calls are to be given more
// time: a request for input is open, or one was answered within the last
// timeout (the call has its timeout again from the answer).
func (l *link) waitsForPerson() (bool, time.Duration) {
	c := l.c
	if l.asking.Load() > 0 {
		return true, c.srv.Timeout
	}
	if at := l.askedAt.Load(); at != 0 {
		if left := c.srv.Timeout - time.Since(time.Unix(0, at)); left > 0 {
			return true, left
		}
	}
	return false, 0
}
