package storage

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/catalog"
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

// testAgent is an agent snapshot with most fields set.
func testAgent() *catalog.Agent {
	return &catalog.Agent{
		ID: "pm", Name: "Priya", Title: "Product Manager", Icon: "📋",
		Description: "writes PRDs", Source: "bundle", Module: "product-team",
		Path: "/bundles/product-team/agents/pm.md", Format: catalog.FormatXMLCmds, EntryPoint: true,
		Persona:    catalog.Persona{Role: "PM", Identity: "seasoned", CommunicationStyle: "direct", Principles: "users first"},
		Activation: []string{"load config", "greet"},
		Rules:      []string{"stay in character"},
		Prompts:    []catalog.Prompt{{ID: "p1", Content: "do it"}},
		Menu: []catalog.MenuItem{
			{Cmd: "*help", Trigger: "help", Description: "show menu"},
			{Cmd: "*create-prd", Trigger: "create-prd", Code: "CP", Description: "create a PRD", Workflow: "{bundle-root}/workflows/prd/workflow.yaml"},
		},
		Home: &catalog.Home{
			Kind: "bundle", Name: "product-team", ProjectRoot: "/bundles/product-team",
			BundleRoot: "/bundles/product-team", ConfigPath: "/bundles/product-team/config.yaml",
			Config: map[string]string{"user_name": "Ada", "output_folder": "/outputs"},
		},
	}
}

// testMessages is a transcript with a system prompt, a multi-part user
// message, an assistant tool call and its result.
func testMessages() []openai.ChatCompletionMessage {
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "You are Priya."},
		{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "*create-prd"}}},
		{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{
			{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "preload_workflow", Arguments: `{"path":"/project/workflows/prd"}`}},
			{ID: "call_2", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"/project/config.yaml"}`}},
		}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Name: "preload_workflow", Content: "workflow.yaml: ..."},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_2", Name: "read_file", Content: "user_name: Ada"},
		{Role: openai.ChatMessageRoleAssistant, Content: "Let's start the PRD.", ReasoningContent: "plan"},
	}
}

// textMessage is a user message of about size bytes, numbered i.
func textMessage(i, size int) openai.ChatCompletionMessage {
	body := fmt.Sprintf("message %d ", i)
	if size > len(body) {
		body += strings.Repeat("x", size-len(body))
	}
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: body}
}

// wantErrIs fails unless err matches target.
func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want one matching %v", what, err, target)
	}
}
