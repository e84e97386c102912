package engine

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/sandbox"
)

const (
	// elideAt is the share of the context budget at which old tool results
	// are elided.
	elideAt = 0.75
	// elideTo is the share of the budget an elision aims to get under.
	elideTo = 0.5
	// keepRecent messages at the end are never elided.
	keepRecent = 12
	// bulky is the size above which a tool result counts as bulky.
	bulky = 1024
)

// estimateTokens is a cheap token estimate: about four bytes a token.
func estimateTokens(msgs []openai.ChatCompletionMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content) + 16
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Arguments) + len(tc.Function.Name) + 16
		}
	}
	return n / 4
}

// maybeElide moves the elision mark when the request would near the context
// budget. It moves in one large step, down to half the budget where it can,
// so requests keep extending each other (and stay cacheable) between the
// rare moves instead of shifting a little on every turn.
func (e *Engine) maybeElide(s *Session) {
	total := estimateTokens(requestMessages(s))
	if float64(total) < elideAt*float64(e.cfg.ContextBudget) {
		return
	}
	target := int(elideTo * float64(e.cfg.ContextBudget))
	floor := len(s.Messages) - keepRecent
	mark := s.Elided
	for i := s.Elided; i < len(s.Messages); i++ {
		if m := s.Messages[i]; m.Role == openai.ChatMessageRoleTool && len(m.Content) > bulky {
			total -= (len(m.Content) - stubSize) / 4
		}
		mark = i + 1
		if mark >= floor && total <= target {
			break
		}
	}
	if mark > s.Elided {
		s.Elided = mark
		e.cfg.Logger.Debug("elided old tool results", "session", s.ID, "mark", mark, "tokens", total)
	}
}

// requestMessages is the transcript as sent: bulky tool results before the
// elision mark are replaced by a one-line stub.
func requestMessages(s *Session) []openai.ChatCompletionMessage {
	if s.Elided <= 0 {
		return s.Messages
	}
	out := make([]openai.ChatCompletionMessage, len(s.Messages))
	copy(out, s.Messages)
	calls := map[string]openai.ToolCall{}
	for i := 0; i < s.Elided && i < len(out); i++ {
		m := out[i]
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = tc
		}
		if m.Role == openai.ChatMessageRoleTool && len(m.Content) > bulky {
			out[i].Content = stub(calls[m.ToolCallID], m.Content)
		}
	}
	return out
}

// stubSize is about the size of a stub, for estimates.
const stubSize = 200

// stub is the one-line replacement of an elided tool result: what the call
// was, and how to get it back.
func stub(tc openai.ToolCall, content string) string {
	what := "an earlier tool result"
	if tc.Function.Name != "" {
		what = "the earlier result of " + tc.Function.Name + ": " + callSummary(tc, content) + ","
	}
	out, _ := json.Marshal(map[string]string{"elided": fmt.Sprintf("%s removed to save context; call the tool again if you need it", what)})
	return string(out)
}

// openSandbox opens the sandbox of a session's agent.
func (e *Engine) openSandbox(s *Session) (*sandbox.Sandbox, error) {
	a := s.Agent
	cfg := sandbox.Config{
		CoreFS:   e.cfg.CoreFS,
		CoreRoot: e.cfg.CoreRoot,
		Vars:     s.Vars,
		MaxRead:  e.cfg.MaxRead,
		MaxWrite: e.cfg.MaxWrite,
	}
	if a != nil && a.Home != nil {
		cfg.ProjectRoot = a.Home.ProjectRoot
		if a.Home.CoreRoot != "" {
			cfg.CoreRoot = a.Home.CoreRoot
		}
	}
	if e.cfg.OutputRoot != nil {
		cfg.OutputRoot = e.cfg.OutputRoot(s.ID)
	}
	if e.cfg.InputRoot != nil {
		cfg.InputRoot = e.cfg.InputRoot(s.ID)
	}
	cfg.SkillsRoot = e.catalog().SkillsDir
	cfg.OutputAliases = outputAliases(a)
	sb, err := sandbox.Open(cfg)
	if err != nil {
		return nil, err
	}
	if s.Skill != nil {
		sb.SetBase(s.Skill.Root, s.Skill.Vars)
	}
	return sb, nil
}
