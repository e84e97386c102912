package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"agentbot/engine/transcript"
)

// ExportMarkdown renders a session's transcript as a markdown document: the
// conversation, each tool call with a short summary of its result, and the
// saved outputs. The system prompt is left out.
func ExportMarkdown(s *transcript.Session) string {
	var b strings.Builder
	name := s.AgentID
	if s.Agent != nil && s.Agent.Name != "" {
		name = fmt.Sprintf("%s (%s)", s.Agent.Name, s.AgentID)
	}
	fmt.Fprintf(&b, "# Session %s\n\n- Agent: %s\n- Key: %s\n- Date: %s\n- Model calls: %d, tokens: %d prompt (%d cached), %d completion\n",
		s.ID, name, s.Key, s.Date, s.Usage.Calls, s.Usage.Prompt, s.Usage.Cached, s.Usage.Completion)
	if len(s.Outputs) > 0 {
		b.WriteString("- Outputs:\n")
		for _, o := range s.Outputs {
			if o.Internal {
				continue
			}
			fmt.Fprintf(&b, "  - %s v%d (%d bytes, %s)\n", o.Path, o.Version, o.Size, o.Time.UTC().Format("2006-01-02 15:04"))
		}
	}
	b.WriteString("\n---\n")
	calls := map[string]transcript.ToolCall{}
	for _, m := range s.Messages {
		switch m.Role {
		case transcript.RoleSystem:
			continue
		case transcript.RoleUser:
			fmt.Fprintf(&b, "\n**User:**\n\n%s\n", strings.TrimSpace(m.Content))
		case transcript.RoleAssistant:
			if c := strings.TrimSpace(m.Content); c != "" {
				fmt.Fprintf(&b, "\n**Agent:**\n\n%s\n", c)
			}
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = tc
				fmt.Fprintf(&b, "\n> tool `%s`: %s\n", tc.Function.Name, callStatus(tc))
			}
		case transcript.RoleTool:
			fmt.Fprintf(&b, "> → %s\n", summarizeResult(calls[m.ToolCallID], m.Content))
		}
	}
	if len(s.Pending) > 0 {
		b.WriteString("\n---\n\n## Waiting for approval\n\n")
		for _, p := range s.Pending {
			state := "undecided"
			if p.Decision != "" {
				state = strings.TrimSpace(p.Decision + " " + p.By)
			}
			fmt.Fprintf(&b, "- `%s` (call %s), asked %s: %s\n", p.Tool, p.CallID, p.Asked.UTC().Format("2006-01-02 15:04:05"), state)
		}
	}
	if len(s.Audit) > 0 {
		b.WriteString("\n---\n\n## Tool calls\n\n")
		b.WriteString(AuditTable(s.Audit))
	}
	return b.String()
}

// AuditTable renders an audit trail as a markdown table: time, tool,
// server, call id, outcome, approver, duration, result size and the digest
// of the arguments. It never holds arguments or results.
func AuditTable(recs []transcript.ToolRecord) string {
	var b strings.Builder
	b.WriteString("| Time | Tool | Server | Call | Outcome | Approver | ms | Result bytes | Arguments |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range recs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d | %d | %s |\n", r.Time.UTC().Format("2006-01-02 15:04:05"),
			r.Tool, r.Server, r.CallID, r.Outcome, r.Approver, r.DurationMS, r.ResultBytes, r.ArgsDigest)
	}
	return b.String()
}

// summarizeResult describes a stored result: an elision stub as it says,
// anything else through its tool.
func summarizeResult(tc transcript.ToolCall, content string) string {
	var r map[string]any
	if json.Unmarshal([]byte(content), &r) != nil {
		return fmt.Sprintf("%d bytes", len(content))
	}
	if e, ok := r["elided"].(string); ok {
		return e
	}
	return callSummary(tc, content)
}
