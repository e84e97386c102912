package bolt

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine/transcript"
)

// clock is a settable time source for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openAt opens a store in dir with the clock (if any) and closes it when
// the test ends unless the test closed it already.
func openAt(t testing.TB, dir string, c *clock) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	if c != nil {
		s.Now = c.Now
	}
	t.Cleanup(func() { _ = s.db.Close() })
	return s
}

// reopen closes s and opens its directory again with the same clock.
func reopen(t testing.TB, s *Store, c *clock) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return openAt(t, s.Dir(), c)
}

// testAgent is an agent snapshot with every field set.
func testAgent() *transcript.AgentSnapshot {
	return &transcript.AgentSnapshot{
		ID: "pm", Name: "Priya", Title: "Product Manager", Icon: "📋",
		Description: "writes PRDs", Source: "bundle", Module: "product-team",
		Format: "xml-cmds", SkillName: "bmad-agent-pm",
	}
}

// testMessages is a transcript with a system prompt, a user message, an
// assistant tool call and its result.
func testMessages() []transcript.Message {
	return []transcript.Message{
		{Role: transcript.RoleSystem, Content: "You are Priya."},
		{Role: transcript.RoleUser, Content: "*create-prd"},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{
			{ID: "call_1", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "preload_workflow", Arguments: `{"path":"/project/workflows/prd"}`}},
			{ID: "call_2", Type: transcript.ToolTypeFunction, Function: transcript.FunctionCall{Name: "read_file", Arguments: `{"path":"/project/config.yaml"}`}},
		}},
		{Role: transcript.RoleTool, ToolCallID: "call_1", Content: "workflow.yaml: ..."},
		{Role: transcript.RoleTool, ToolCallID: "call_2", Content: "user_name: Ada"},
		{Role: transcript.RoleAssistant, Content: "Let's start the PRD.", Refusal: "plan"},
	}
}

// textMessage is a user message of about size bytes, numbered i.
func textMessage(i, size int) transcript.Message {
	body := fmt.Sprintf("message %d ", i)
	if size > len(body) {
		body += strings.Repeat("x", size-len(body))
	}
	return transcript.Message{Role: transcript.RoleUser, Content: body}
}

// wantErrIs fails unless err matches target.
func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want one matching %v", what, err, target)
	}
}
