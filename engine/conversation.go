package engine

import (
	"context"
	"errors"
	"fmt"

	"agentbot/engine/catalog"
	"agentbot/engine/prompt"
	"agentbot/engine/transcript"
)

// SessionStore is what a conversation needs of the store: the session a
// key (a Slack thread, a terminal session name) is attached to.
type SessionStore interface {
	Store
	// FindSession returns the session attached to key, or (nil, nil).
	FindSession(ctx context.Context, key string) (*transcript.Session, error)
	// NewSession creates a session and attaches it to key.
	NewSession(ctx context.Context, key string) (*transcript.Session, error)
	// DetachSession frees the session's key and keeps its data.
	DetachSession(ctx context.Context, id string) error
}

// SessionDeleter removes a session for good, with its key and documents
// (storage.Retention has it).
type SessionDeleter interface {
	DeleteSession(ctx context.Context, id string) error
}

// Conversation is the lifecycle of the session attached to one key, the
// same for every front end: open (find or create, then resume), start or
// switch the agent, run until nothing is pending, interrupt, and close
// (a session that never got an answer is not kept). Like a turn,
// its methods must not run concurrently.
type Conversation struct {
	e     *Engine
	store SessionStore
	key   string
	// Live is the session attached to the key now. After Open failed with an
	// *AgentGoneError it holds the stored record, without an agent, so
	// the caller can Switch to another one.
	Live *Session
	// failed is set when the last Run ended in an error.
	failed bool
}

// Open returns the conversation of key: the session attached to it, found
// or created, and resumed (Resume). When the session's agent is gone the
// error is an *AgentGoneError and the conversation is still returned.
func (e *Engine) Open(ctx context.Context, st SessionStore, key string) (*Conversation, error) {
	rec, err := st.FindSession(ctx, key)
	if err == nil && rec == nil {
		rec, err = st.NewSession(ctx, key)
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
		c.Live = &Session{Session: *rec}
		return c, err
	}
	if err != nil {
		return nil, err
	}
	c.Live = s
	return c, nil
}

// Start activates the conversation's session with agent a (Activate);
// prepare, when set, first sets what the front end knows of the session
// (such as Vars["user_name"] or its owner).
func (c *Conversation) Start(ctx context.Context, a *catalog.Agent, prepare func(*Session)) (*Greeting, error) {
	if prepare != nil {
		prepare(c.Live)
	}
	return c.e.Activate(ctx, c.Live, a)
}

// Switch moves the key to a fresh session and starts agent a in it (Start);
// the earlier session is kept, detached, and the new agent gets a handoff
// of its work (Handoff). A session never used stays
// attached and is reused. With a nil agent the fresh session waits for one
// (and the greeting is nil).
func (c *Conversation) Switch(ctx context.Context, a *catalog.Agent, prepare func(*Session)) (*Greeting, error) {
	if c.Live.AgentDef != nil || len(c.Live.Messages) > 0 {
		person, names := c.Live.Person, c.Live.Names
		who := c.Live.nameOf(ctx, person)
		if who == "" {
			who = person
		}
		handoff := Handoff(&c.Live.Session, who)
		if err := c.store.DetachSession(ctx, c.Live.ID); err != nil {
			return nil, fmt.Errorf("switch agent: detach session %s: %w", c.Live.ID, err)
		}
		rec, err := c.store.NewSession(ctx, c.key)
		if err != nil {
			return nil, fmt.Errorf("switch agent: new session: %w", err)
		}
		c.Live = &Session{Session: *rec, Person: person, Names: names}
		c.Live.Handoff = handoff // prompt.Handoff: the new agent hears what came before
	}
	if a == nil {
		return nil, nil
	}
	return c.Start(ctx, a, prepare)
}

// Handoff summarizes a thread's earlier session for the agent taking the
// thread over (see prompt.Handoff).
func Handoff(prev *transcript.Session, person string) string { return prompt.Handoff(prev, person) }

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
// the last turn failed without an answer, a new input first closes that
// turn (two user messages in a row are refused by providers): the turn of
// this conversation's last Run, or one the stored transcript shows (it
// ends with the user's message), so a retry works in a conversation opened
// afresh, as Slack opens one for each message. The usage of each turn is
// added to the engine's Budgets.
func (c *Conversation) Run(ctx context.Context, input string, emit func(Event), decide Decider) (*Result, error) {
	res, err := c.run(ctx, input, emit, decide)
	c.failed = err != nil
	return res, err
}

// run is Run without the bookkeeping of its outcome.
func (c *Conversation) run(ctx context.Context, input string, emit func(Event), decide Decider) (*Result, error) {
	if input != "" && (c.failed && Unfinished(c.Live) || awaitsAnswer(c.Live)) {
		if err := c.Interrupt(ctx, failedNote); err != nil {
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
			if err := c.Decide(ctx, p.CallID, d, by); err != nil {
				return res, err
			}
		}
		res, err = c.turn(ctx, "", emit)
	}
	return res, err
}

// awaitsAnswer reports whether the session's transcript ends with a
// user's message after its activation: the turn for it failed (or the
// process died) before the model answered.
func awaitsAnswer(s *Session) bool {
	n := len(s.Messages)
	return n > 3 && s.Messages[n-1].Role == transcript.RoleUser && len(s.Pending) == 0
}

// turn runs one engine turn and records its usage.
func (c *Conversation) turn(ctx context.Context, input string, emit func(Event)) (*Result, error) {
	res, err := c.e.Turn(ctx, c.Live, input, emit)
	if res != nil {
		// The tokens were spent even when the turn was cancelled: count them.
		if rerr := c.e.cfg.Budgets.Record(context.WithoutCancel(ctx), c.key, res.Usage); rerr != nil {
			c.e.cfg.Logger.Error("record token usage", "session", c.Live.ID, "err", rerr)
		}
	}
	return res, err
}

// Decide records a decision on a pending call (see Engine.Decide); the
// next Run with no input resumes the turn.
func (c *Conversation) Decide(ctx context.Context, callID, decision, by string) error {
	return c.e.Decide(ctx, c.Live, callID, decision, by)
}

// Interrupt ends the turn in progress with note as the agent's last word
// (see Engine.Interrupt).
func (c *Conversation) Interrupt(ctx context.Context, note string) error {
	return c.e.Interrupt(ctx, c.Live, note)
}

// Failed reports whether the last Run ended in an error.
func (c *Conversation) Failed() bool { return c.failed }

// Answered reports whether the session ever got an answer from the model
// (a model call, a document, or a call waiting for approval). Runtime
// writing alone, the greeting or the menu again, is not an answer.
func (c *Conversation) Answered() bool {
	return c.Live.Usage.Calls > 0 || len(c.Live.Outputs) > 0 || len(c.Live.Pending) > 0
}

// Close ends a front end's use of the conversation, as the terminal does
// when its input ends. A session that never got an answer (Answered), such
// as one whose every model call failed, is not kept: it is deleted with
// its key, so the session list shows no empty tries and the next
// conversation under the key starts afresh. It reports whether it deleted
// the session. A Slack thread is never closed: it stays open to a retry.
func (c *Conversation) Close(ctx context.Context, st SessionDeleter) (deleted bool, err error) {
	if c.Live == nil || c.Live.ID == "" || c.Answered() {
		return false, nil
	}
	if err := st.DeleteSession(ctx, c.Live.ID); err != nil {
		return false, fmt.Errorf("drop unanswered session %s: %w", c.Live.ID, err)
	}
	return true, nil
}
