// Package engine is the agent runtime: the conversation lifecycle
// (conversation.go), activation (activation*.go), the agentic loop
// (loop.go), the tools the model calls (tool.go, one tool_<name>.go each,
// external*.go for the tools from outside), approvals (approval.go),
// budgets (budget.go), projects (projects.go) and the documents a session
// saves (outputs.go). Its parts with a role of their own are packages
// beside it: engine/window (context management), engine/project (a
// project's shared documents), engine/prompt (system prompts and
// greetings), engine/menu (reading a message against a menu),
// engine/export, engine/budget and engine/argtext. It knows nothing of
// Slack or bbolt; callers persist sessions through the Store interface.
package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/export"
	"agentbot/engine/project"
	"agentbot/engine/transcript"
	"agentbot/engine/window"
)

// Session is one long-running conversation with one agent: the stored
// record (transcript.Session) and the agent it runs, resolved from the
// catalog when the session starts or resumes.
type Session struct {
	transcript.Session
	// AgentDef is the definition of the agent the session runs; it is
	// never persisted (the record keeps a snapshot, Session.Agent). A
	// reload does not change it.
	AgentDef *catalog.Agent `json:"-"`
	// Person is who writes in the current turn (a Slack user id, a
	// terminal user), set by the front end before it runs the turn: the
	// author of the document versions the turn saves. Never persisted.
	Person string `json:"-"`
	// Names, set by the front end, says how a person is called (a Slack
	// display name; "" when not known): the tools and the handoff name
	// people to the model by it rather than by their id. Nil: by id.
	// Never persisted.
	Names Names `json:"-"`
	// stubs caches the elided form of messages (context management).
	stubs window.Stubs
	// project is the project the session's sandbox was last opened in
	// (openSandbox), whose documents it mounts: the turn's tools read and
	// save there. Nil without projects.
	project *project.Folder
}

// Names says how a person (a front end's id of them) is called, "" when
// not known.
type Names func(ctx context.Context, person string) string

// nameOf is how person is called, "" when not known.
func (s *Session) nameOf(ctx context.Context, person string) string {
	if s.Names == nil || person == "" {
		return ""
	}
	return s.Names(ctx, person)
}

// view is the session as context management sees it.
func view(s *Session) *window.Session { return window.Of(&s.Session, &s.stubs) }

// Output is one document the agent saved.
type Output = transcript.Output

// Usage sums token counts and model calls.
type Usage = transcript.Usage

// Store persists sessions. The engine calls SaveSession after every loop
// iteration; an implementation appends only the messages it has not stored.
type Store interface {
	SaveSession(ctx context.Context, s *transcript.Session) error
}

// Snapshot returns what a stored session keeps of a: its names and where
// it comes from, no host path.
func Snapshot(a *catalog.Agent) *transcript.AgentSnapshot {
	if a == nil {
		return nil
	}
	return &transcript.AgentSnapshot{
		ID: a.ID, Name: a.Name, Title: a.Title, Icon: a.Icon, Description: a.Description,
		Source: a.Source, Module: a.Module, Format: string(a.Format), SkillName: a.SkillName,
	}
}

// AgentGoneError says a stored session's agent is no longer in the catalog.
type AgentGoneError struct {
	// SessionID is the session's id; Agent the snapshot it was stored with
	// (nil for a record without one) and AgentID its agent id.
	SessionID string
	AgentID   string
	Agent     *transcript.AgentSnapshot
}

// Error names the agent and what to do instead.
func (e *AgentGoneError) Error() string {
	name := e.AgentID
	if a := e.Agent; a != nil && a.Name != "" {
		name = strings.TrimSpace(a.Icon + " " + a.Name)
		if a.Title != "" {
			name += ", " + a.Title
		}
		name += " (" + e.AgentID + ")"
	}
	return fmt.Sprintf("this conversation's agent %s is no longer installed; start a new thread, or pick another agent with /agent use", name)
}

// Resume returns the live session of a stored record, its agent resolved
// from the current catalog by AgentID. When a later install took the id,
// the agent is found by the snapshot's module and name; when it is gone,
// the error is an *AgentGoneError. A record with no AgentID resumes with
// no agent.
func (e *Engine) Resume(rec *transcript.Session) (*Session, error) {
	if rec == nil {
		return nil, errors.New("resume: no session")
	}
	s := &Session{Session: *rec}
	if rec.AgentID == "" {
		return s, nil
	}
	a := resolveAgent(e.catalog(), rec.AgentID, rec.Agent)
	if a == nil {
		return nil, &AgentGoneError{SessionID: rec.ID, AgentID: rec.AgentID, Agent: rec.Agent}
	}
	s.AgentDef = a
	return s, nil
}

// resolveAgent finds a stored session's agent: the agent under id when it
// is the one in the snapshot, else the snapshot's agent by module and name.
func resolveAgent(c *catalog.Catalog, id string, snap *transcript.AgentSnapshot) *catalog.Agent {
	same := func(a *catalog.Agent) bool {
		return snap == nil || (a.Module == snap.Module && a.Source == snap.Source && a.Name == snap.Name)
	}
	for _, a := range c.Agents {
		if a.ID == id {
			if same(a) {
				return a
			}
			break
		}
	}
	if snap == nil {
		return nil
	}
	var found *catalog.Agent
	for _, a := range c.Agents {
		if a.Module == snap.Module && a.Name == snap.Name {
			if a.Source == snap.Source {
				return a
			}
			if found == nil {
				found = a
			}
		}
	}
	return found
}

// skillMode reports whether the session's agent is a skill-format agent
// (BMAD 6.4+ or Agent Skills), which is offered the skill tools instead of
// preload_workflow.
func (s *Session) skillMode() bool {
	return s.AgentDef != nil && s.AgentDef.Format == catalog.FormatSkill
}

// Unfinished reports whether the session's last turn was cut short: its
// transcript does not end with the agent's answer (a crash came between
// the user's message, a tool call or a tool result and the answer).
func Unfinished(s *Session) bool {
	return s != nil && s.Session.Unfinished()
}

// LastAnswer returns the agent's last answer, or "".
func LastAnswer(s *Session) string {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := s.Messages[i]; m.Role == transcript.RoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content
		}
	}
	return ""
}

// ExportMarkdown renders a session's transcript as a markdown document
// (see export.Tools.Markdown).
func ExportMarkdown(s *transcript.Session) string {
	return export.Tools{Status: callStatus, Summary: callSummary}.Markdown(s)
}

// AuditTable renders an audit trail as a markdown table (see
// export.AuditTable).
func AuditTable(recs []transcript.ToolRecord) string { return export.AuditTable(recs) }
