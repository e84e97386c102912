package engine

import (
	"context"
	"errors"
	"fmt"

	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
)

// SessionStore is what a conversation needs of the store: the session a
// key (a Slack thread, a terminal session name) is attached to.
type SessionStore interface {
	Store
	// FindSession returns the session attached to key, or (nil, nil).
	FindSession(key string) (*transcript.Session, error)
	// NewSession creates a session and attaches it to key.
	NewSession(key string) (*transcript.Session, error)
	// DetachSession frees the session's key and keeps its data.
	DetachSession(id string) error
}

// Conversation is the lifecycle of the session attached to one key, the
// same for every front end: open (find or create, then resume), start or
// switch the agent, run until nothing is pending, interrupt. Like a turn,
// its methods must not run concurrently.
type Conversation struct {
	e     *Engine
	store SessionStore
	key   string
	// Session is the live session. After Open failed with an
	// *AgentGoneError it holds the stored record, without an agent, so
	// the caller can Switch to another one.
	*Session
	// failed is set when the last Run ended in an error.
	failed bool
}

// Open returns the conversation of key: the session attached to it, found
// or created, and resumed (Resume). When the session's agent is gone the
// error is an *AgentGoneError and the conversation is still returned.
func (e *Engine) Open(st SessionStore, key string) (*Conversation, error) {
	rec, err := st.FindSession(key)
	if err == nil && rec == nil {
		rec, err = st.NewSession(key)
	}
	if err != nil {
		return nil, &SaveError{Err: fmt.Errorf("open session %s: %w", key, err)}
	}
	return e.Continue(st, rec)
}

// Continue returns the conversation of a stored record, resumed (Resume).
// When the record's agent is gone the error is an *AgentGoneError and the
// conversation is still returned, holding the record.
func (e *Engine) Continue(st SessionStore, rec *transcript.Session) (*Conversation, error) {
	if rec == nil {
		return nil, errors.New("continue: no session")
	}
	c := &Conversation{e: e, store: st, key: rec.Key}
	s, err := e.Resume(rec)
	var gone *AgentGoneError
	if errors.As(err, &gone) {
		c.Session = &Session{Session: *rec}
		return c, err
	}
	if err != nil {
		return nil, err
	}
	c.Session = s
	return c, nil
}

// Start activates the conversation's session with agent a (Activate);
// prepare, when set, first sets what the front end knows of the session
// (such as Vars["user_name"] or its owner).
func (c *Conversation) Start(a *catalog.Agent, prepare func(*Session)) (*Greeting, error) {
	if prepare != nil {
		prepare(c.Session)
	}
	return c.e.Activate(c.Session, a)
}

// Switch moves the key to a fresh session and starts agent a in it (Start);
// the earlier session is kept, detached. A session never used stays
// attached and is reused. With a nil agent the fresh session waits for one
// (and the greeting is nil).
func (c *Conversation) Switch(a *catalog.Agent, prepare func(*Session)) (*Greeting, error) {
	if c.Agent != nil || len(c.Messages) > 0 {
		if err := c.store.DetachSession(c.ID); err != nil {
			return nil, fmt.Errorf("switch agent: detach session %s: %w", c.ID, err)
		}
		rec, err := c.store.NewSession(c.key)
		if err != nil {
			return nil, fmt.Errorf("switch agent: new session: %w", err)
		}
		c.Session = &Session{Session: *rec}
	}
	if a == nil {
		return nil, nil
	}
	return c.Start(a, prepare)
}

// Decider decides a call that waits for approval; ok false leaves it
// waiting (a person decides later, through Decide).
type Decider func(p transcript.Approval) (decision, by string, ok bool)

// failedNote closes a failed turn in the transcript when the user writes
// again in the same conversation; a conversation that ends after a failed
// turn leaves it open instead, so the next one on the session resumes it.
const failedNote = "(This turn failed before an answer; the user wrote again.)"

// Run runs one turn for input ("" resumes a turn cut short or waiting on
// decisions) and then, while calls wait for approval and decide decides
// them, records the decisions and resumes, until nothing is pending. When
// the conversation's last Run failed without an answer, a new input first
// closes that turn (two user messages in a row are refused by providers).
// The usage of each turn is added to the engine's Budgets.
func (c *Conversation) Run(ctx context.Context, input string, emit func(Event), decide Decider) (*Result, error) {
	res, err := c.run(ctx, input, emit, decide)
	c.failed = err != nil
	return res, err
}

// run is Run without the bookkeeping of its outcome.
func (c *Conversation) run(ctx context.Context, input string, emit func(Event), decide Decider) (*Result, error) {
	if c.failed && input != "" && Unfinished(c.Session) {
		if err := c.Interrupt(failedNote); err != nil {
			return nil, fmt.Errorf("close the failed turn: %w", err)
		}
	}
	res, err := c.turn(ctx, input, emit)
	for err == nil && decide != nil && res != nil && len(res.Pending) > 0 {
		for _, p := range res.Pending {
			d, by, ok := decide(p)
			if !ok {
				return res, nil
			}
			if err := c.Decide(p.CallID, d, by); err != nil {
				return res, err
			}
		}
		res, err = c.turn(ctx, "", emit)
	}
	return res, err
}

// turn runs one engine turn and records its usage.
func (c *Conversation) turn(ctx context.Context, input string, emit func(Event)) (*Result, error) {
	res, err := c.e.Turn(ctx, c.Session, input, emit)
	if res != nil {
		if rerr := c.e.cfg.Budgets.Record(c.key, res.Usage); rerr != nil {
			c.e.cfg.Logger.Error("record token usage", "session", c.ID, "err", rerr)
		}
	}
	return res, err
}

// Decide records a decision on a pending call (see Engine.Decide); the
// next Run with no input resumes the turn.
func (c *Conversation) Decide(callID, decision, by string) error {
	return c.e.Decide(c.Session, callID, decision, by)
}

// Interrupt ends the turn in progress with note as the agent's last word
// (see Engine.Interrupt).
func (c *Conversation) Interrupt(note string) error {
	return c.e.Interrupt(c.Session, note)
}

// Failed reports whether the last Run ended in an error.
func (c *Conversation) Failed() bool { return c.failed }
