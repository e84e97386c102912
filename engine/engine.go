package engine

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"agentbot/engine/catalog"
	"agentbot/engine/core"
	"agentbot/engine/llm"
	"agentbot/engine/transcript"
	"agentbot/engine/window"
)

// OutputStore keeps the bytes of saved documents, so that any replica can
// upload, export or serve them; bolt.Store and postgres.Store implement
// it.
type OutputStore interface {
	// PutOutput stores the bytes of one version of a session's document;
	// the same path and version again replaces them.
	PutOutput(ctx context.Context, sessionID string, o transcript.Output, data []byte) error
	// OutputData returns the bytes of a stored version (0: the latest).
	OutputData(ctx context.Context, sessionID, path string, version int) ([]byte, error)
}

// Model is what the loop needs of a model client; *model.Client (engine/model) implements it.
type Model interface {
	// Complete sends one request, calling onText with each text delta of
	// the answer (onText may be nil), and returns the assembled reply.
	// Errors are *llm.Error.
	Complete(ctx context.Context, req llm.Request, onText func(delta string)) (*llm.Response, error)
}

// Config configures an Engine. Zero values take the documented defaults.
type Config struct {
	Model Model
	// Store persists sessions after every iteration; it may be nil in tests.
	Store Store
	// Outputs, when set, keeps every saved document's bytes: each save
	// writes through to it, and a session's output folder is brought up to
	// date from it when its sandbox opens. Nil: the local folder alone.
	Outputs OutputStore
	// Projects, when set, makes the sessions of a project share their
	// /outputs: versioned documents in a store (see Projects).
	Projects *Projects
	// OutputRoot and InputRoot return the host folders of a session.
	OutputRoot func(sessionID string) string
	InputRoot  func(sessionID string) string
	// Catalog returns the current catalog, where skills are looked up
	// (load_skill, the menu shortcut) and the shared skills folder is
	// found. Nil means no skills.
	Catalog func() *catalog.Catalog
	// CoreRoot overrides the embedded core for bundles (AGENTBOT_CORE_ROOT).
	CoreRoot string
	// Hidden are host folders /project, /core and /skills never show,
	// whatever the layout or links: agentbot's data folder, where each
	// session sees only its own /outputs and /inputs.
	Hidden []string
	// Deny adds file name patterns the model may never read outside its
	// /outputs to sandbox.DefaultDeny, which always applies (nil: the
	// defaults alone).
	Deny []string
	// CoreFS is the embedded core (default core.FS).
	CoreFS fs.FS
	// MaxIterations bounds model calls per turn (default 50).
	MaxIterations int
	// TurnTimeout bounds a whole turn (default 15 minutes).
	TurnTimeout time.Duration
	// ToolParallelism bounds the tool calls of one response run at once
	// (default 4).
	ToolParallelism int
	// PartyParallelism bounds the personas of a party round (party_round)
	// that think at once (default 0: all of them).
	PartyParallelism int
	// MaxRead and MaxWrite cap file sizes for the tools (default 1 MiB).
	MaxRead  int64
	MaxWrite int64
	// ContextBudget is the model's context in tokens (default 128000). Old
	// bulky tool results are elided when the transcript nears it.
	ContextBudget int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger receives debug lines (default slog.Default()).
	Logger *slog.Logger
	// Budget, when set, returns the tightest token cap on a session, given
	// the usage of the turn so far: a turn at the cap is refused with a
	// *BudgetError, and a turn near it finishes without more tools.
	Budget func(ctx context.Context, s *Session, turn Usage) Budget
	// Budgets, when set, are the token caps: Budget defaults to
	// Budgets.Budget, and a conversation's turns add their usage to them.
	Budgets *Budgets
	// OnToolRecord, when set, is told of every tool call's audit record as
	// it is added to Session.Audit: built-in and external tools, run,
	// failed, denied or expired. It is the engine's one metrics hook (per
	// server, tool and outcome); it never sees arguments or results.
	OnToolRecord func(rec transcript.ToolRecord)
	// ExternalTools, when set, returns the tools from outside the engine a
	// session is offered besides the built-in ones (its agent's and its
	// channel's MCP servers' tools). It is called once per turn; notify
	// tells the user something about them (a server whose tools are
	// unavailable this turn) as an EventNotice.
	ExternalTools func(ctx context.Context, s *Session, notify func(text string)) []ExternalTool
	// Ask, when set, asks the person of a turn of s (Session.Person) a
	// question a tool asks in the middle of a call (ExternalCall.Ask), in
	// the thread or the terminal, and waits for the answer or ctx's end.
	Ask func(ctx context.Context, s *Session, q Question) (Answer, error)
}

// Engine runs sessions. It is safe for concurrent use by different sessions;
// turns of one session must not run concurrently.
type Engine struct {
	cfg Config
	// stored marks the document versions known to be in cfg.Outputs with
	// the bytes of the local file (outputs.go).
	stored storedOutputs
	// projects holds the working copy of each project in use, by name.
	projects sync.Map
	// win keeps requests under the model's context window.
	win *window.Manager
	// audit keeps the audit trail of tool calls.
	audit auditor
}

// New returns an engine for cfg.
func New(cfg Config) *Engine {
	if cfg.CoreFS == nil {
		cfg.CoreFS = core.FS
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = 50
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = 15 * time.Minute
	}
	if cfg.ToolParallelism <= 0 {
		cfg.ToolParallelism = 4
	}
	if cfg.MaxRead <= 0 {
		cfg.MaxRead = 1 << 20
	}
	if cfg.MaxWrite <= 0 {
		cfg.MaxWrite = 1 << 20
	}
	if cfg.ContextBudget <= 0 {
		cfg.ContextBudget = 128000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Budget == nil && cfg.Budgets != nil {
		cfg.Budget = cfg.Budgets.Budget
	}
	win := &window.Manager{Budget: cfg.ContextBudget, Model: cfg.Model, Logger: cfg.Logger,
		Summary: callSummary, Status: callStatus, Loads: []string{ToolLoadSkill, ToolPreloadWorkflow}}
	return &Engine{cfg: cfg, win: win, stored: storedOutputs{st: cfg.Outputs},
		audit: auditor{now: cfg.Now, log: cfg.Logger, on: cfg.OnToolRecord}}
}

// SaveError is a failure of the session store (to store the session, to
// load it, or to read what a turn needs of it, such as its project), not
// of the model: a turn that returns one may have finished
// (its Result holds the answer), and Save stores it once the store is
// back.
type SaveError struct{ Err error }

// Error says the store failed, and how.
func (e *SaveError) Error() string { return "store the session: " + e.Err.Error() }

// Unwrap returns the store's error.
func (e *SaveError) Unwrap() error { return e.Err }

// Save stores the session as it is in memory, as a turn does after every
// iteration: after a turn failed with a SaveError, it completes the turn
// once the store is back.
func (e *Engine) Save(ctx context.Context, s *Session) error { return e.save(ctx, s) }

func (e *Engine) save(ctx context.Context, s *Session) error {
	s.Updated = e.cfg.Now()
	if e.cfg.Store == nil {
		return nil
	}
	if s.AgentDef != nil {
		s.Session.Agent = Snapshot(s.AgentDef)
	}
	if err := e.cfg.Store.SaveSession(ctx, &s.Session); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			// Cancelled (a stop, a shutdown, the turn's time up), not a
			// store failure: the caller ends as cancelled.
			return fmt.Errorf("store the session: %w", cerr)
		}
		return &SaveError{Err: err}
	}
	return nil
}

// catalog returns the current catalog, or an empty one.
func (e *Engine) catalog() *catalog.Catalog {
	if e.cfg.Catalog != nil {
		if c := e.cfg.Catalog(); c != nil {
			return c
		}
	}
	return &catalog.Catalog{}
}

// Budgets returns the token caps the engine enforces (nil: none).
func (e *Engine) Budgets() *Budgets { return e.cfg.Budgets }

// NewSessionName returns a short name for an unnamed session, from the clock.
func (e *Engine) NewSessionName() string {
	return e.cfg.Now().UTC().Format("20060102-150405.000")
}
