package fakeslack

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// SuggestedPrompts is one assistant.threads.setSuggestedPrompts call Slack
// would show.
type SuggestedPrompts struct {
	Channel  string
	ThreadTS string // "" for the latest message of the channel
	Title    string
	Prompts  []Prompt
	Time     time.Time
}

// Prompt is one suggested prompt: what it shows and what it sends.
type Prompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// Title is a session title set with assistant.threads.setTitle (a DM),
// or for an agent session in a channel with the agents.sessions.setStatus
// that created it or agents.sessions.rename (agents.go).
type Title struct {
	Method   string
	Channel  string
	ThreadTS string
	Title    string
	Time     time.Time
}

func (s *Server) assistantSetSuggestedPrompts(r *apiRequest) (result, string) {
	sp := SuggestedPrompts{Channel: r.get("channel_id"), ThreadTS: r.get("thread_ts"), Title: r.get("title"), Time: r.now}
	_ = json.Unmarshal([]byte(r.get("prompts")), &sp.Prompts) // the rules table checked it
	s.prompts = append(s.prompts, sp)
	return nil, ""
}

func (s *Server) assistantSetTitle(r *apiRequest) (result, string) {
	s.titles = append(s.titles, Title{Method: r.method, Channel: r.get("channel_id"), ThreadTS: r.get("thread_ts"),
		Title: r.get("title"), Time: r.now})
	return nil, ""
}

// agentSessionRename names an agent session (slackapi/java-slack-sdk#1633:
// the agent-sessions successor of assistant.threads.setTitle). It renames
// only a session that exists: one agents.sessions.setStatus created
// (agents.go); before that it is session_not_found.
func (s *Server) agentSessionRename(r *apiRequest) (result, string) {
	t := Title{Method: r.method, Channel: r.get("channel_id"), ThreadTS: r.get("thread_ts"), Title: r.get("title"), Time: r.now}
	k := msgKey(t.Channel, t.ThreadTS)
	if _, ok := s.agentSess[k]; !ok {
		return nil, ErrSessionNotFound
	}
	s.agentSess[k] = t.Title
	s.titles = append(s.titles, t)
	return result{"title": t.Title}, ""
}

// SuggestedPromptsSet returns the suggested prompts Slack shows, in the
// order they were set (calls the rules table refused or Slack silently
// ignores are not here).
func (s *Server) SuggestedPromptsSet() []SuggestedPrompts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.prompts)
}

// Titles returns the session titles set, in order.
func (s *Server) Titles() []Title {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.titles)
}

// Violations returns every payload the rules table refused (or recorded as
// silently ignored), in order.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.violations)
}

// AllowViolations stops the Server from failing its test for payloads the
// rules table refused: for tests that send them on purpose.
func (s *Server) AllowViolations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allowViol = true
}

// reportViolations fails the Server's test for every payload the rules
// table refused, so every end-to-end test checks every payload it sends.
func (s *Server) reportViolations() {
	s.mu.Lock()
	v, allowed := slices.Clone(s.violations), s.allowViol
	s.mu.Unlock()
	if allowed || len(v) == 0 {
		return
	}
	lines := make([]string, len(v))
	for i, x := range v {
		lines[i] = x.String()
	}
	s.tb.Errorf("fakeslack: %d payload(s) broke Slack's rules:\n%s", len(v), strings.Join(lines, "\n"))
}
