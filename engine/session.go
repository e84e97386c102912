// Package engine is the agent runtime: activation, the system prompt, the
// tools the model calls, and the agentic loop. It knows nothing of Slack or
// bbolt; callers persist sessions through the Store interface.
package engine

import (
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/catalog"
	"agentbot/engine/model"
)

// Session is one long-running conversation with one agent.
type Session struct {
	// ID is short and filesystem-safe; it names the session's folders.
	ID string `json:"id"`
	// Key is the caller's key (Slack uses team/channel/thread).
	Key     string `json:"key"`
	AgentID string `json:"agent_id"`
	// Agent is the definition the session started with; a reload does not
	// change it.
	Agent *catalog.Agent `json:"agent"`
	// Date is fixed once per session, for {date}.
	Date string            `json:"date"`
	Vars map[string]string `json:"vars"`
	// Messages is the transcript. It only grows; Messages[0] is the system
	// prompt.
	Messages []openai.ChatCompletionMessage `json:"messages"`
	// Skill is the skill the session runs, set when a skill is loaded.
	Skill *ActiveSkill `json:"skill,omitempty"`
	// Compaction, when set, replaces the older messages in requests by a
	// summary (see context.go).
	Compaction *Compaction `json:"compaction,omitempty"`
	// TokenRatio is the provider's prompt tokens per estimated token,
	// learned from reported usage (0: not yet known).
	TokenRatio float64 `json:"token_ratio,omitempty"`
	// PrefixBreaks counts the times context management changed earlier
	// content of requests (the provider's cached prefix broke);
	// Compactions counts the compaction calls.
	PrefixBreaks int `json:"prefix_breaks,omitempty"`
	// Window is the provider's context window when it reported one smaller
	// than the configured budget (context_length_exceeded).
	Window      int `json:"window,omitempty"`
	Compactions int `json:"compactions,omitempty"`
	// stubs caches the elided form of messages by index (nil: unchanged),
	// so requests do not rebuild them; stubs depend only on the message.
	stubs map[int]*openai.ChatCompletionMessage
	// Elided is how many leading messages have their bulky tool results
	// replaced by a stub in requests.
	Elided  int      `json:"elided"`
	Outputs []Output `json:"outputs"`
	// Meta holds small facts of the caller's own (the bot keeps the last
	// inbound message it handed to a turn here).
	Meta    map[string]string `json:"meta,omitempty"`
	Usage   Usage             `json:"usage"`
	Created time.Time         `json:"created"`
	Updated time.Time         `json:"updated"`
}

// Output is one document the agent saved.
type Output struct {
	// Path is relative to the session's output folder ("prd.md").
	Path    string    `json:"path"`
	Size    int64     `json:"size"`
	Version int       `json:"version"`
	Time    time.Time `json:"time"`
}

// Usage sums token counts and model calls.
type Usage struct {
	model.Usage
	Calls int `json:"calls"`
}

// Store persists sessions. The engine calls SaveSession after every loop
// iteration; an implementation appends only the messages it has not stored.
type Store interface {
	SaveSession(s *Session) error
}

// skillMode reports whether the session's agent is a skill-format agent
// (BMAD 6.4+ or Agent Skills), which is offered the skill tools instead of
// preload_workflow.
func (s *Session) skillMode() bool {
	return s.Agent != nil && s.Agent.Format == catalog.FormatSkill
}

// Unfinished reports whether the session's last turn was cut short: its
// transcript does not end with the agent's answer (a crash came between
// the user's message, a tool call or a tool result and the answer).
func Unfinished(s *Session) bool {
	if s == nil || len(s.Messages) < 2 {
		return false
	}
	last := s.Messages[len(s.Messages)-1]
	return !(last.Role == openai.ChatMessageRoleAssistant && len(last.ToolCalls) == 0)
}

// LastAnswer returns the agent's last answer, or "".
func LastAnswer(s *Session) string {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if m := s.Messages[i]; m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) == 0 {
			return m.Content
		}
	}
	return ""
}
