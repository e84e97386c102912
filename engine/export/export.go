package export

import (
	"encoding/json"
	"fmt"
	"strings"

	"agentbot/engine/transcript"
)

// Tools says how the stored calls of a tool read in an export: Status is
// a call's short human line, Summary describes a call and its result in
// a few words.
type Tools struct {
	Status  func(tc transcript.ToolCall) string
	Summary func(tc transcript.ToolCall, result string) string
}

// Markdown renders a session's transcript as a markdown document: the
// conversation, each tool call with a short summary of its result, and the
// saved outputs. The system prompt is left out.
func (t Tools) Markdown(s *transcript.Session) string {
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
			fmt.Fprintf(&b, "  - %s v%d (%d bytes, %s)\n", o.Path, o.Shown(), o.Size, o.Time.UTC().Format("2006-01-02 15:04"))
		}
	}
	b.WriteString("\n---\n")
	calls := map[string]transcript.ToolCall{}
	for _, m := range s.Messages {
		t.writeMessage(&b, m, calls)
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

// writeMessage renders one transcript message of an export; calls
// collects the tool calls, whose results come later.
func (t Tools) writeMessage(b *strings.Builder, m transcript.Message, calls map[string]transcript.ToolCall) {
	switch m.Role {
	case transcript.RoleUser:
		user, note := splitRuntimeNote(m.Content)
		if user != "" {
			fmt.Fprintf(b, "\n**User:**\n\n%s\n", user)
		}
		if note != "" {
			fmt.Fprintf(b, "\n**Runtime note:**\n\n%s\n", note)
		}
	case transcript.RoleAssistant:
		if c := strings.TrimSpace(m.Content); c != "" && IsRuntimeNote(c) {
			fmt.Fprintf(b, "\n**Runtime note:**\n\n%s\n", c) // Interrupt's note
		} else if c != "" {
			fmt.Fprintf(b, "\n**Agent:**\n\n%s\n", c)
		}
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = tc
			fmt.Fprintf(b, "\n> tool `%s`: %s\n", tc.Function.Name, t.Status(tc))
		}
	case transcript.RoleTool:
		fmt.Fprintf(b, "> → %s\n", t.summarizeResult(calls[m.ToolCallID], m.Content))
	}
}

// runtimeNoteStarts start the messages the runtime writes into a
// transcript in the user's or the agent's place: the session facts of an
// activation (engine/prompt), the loop's limit and budget notes
// (engine: loop.go, budget.go), the compaction summary (engine/window), and the notes
// Interrupt closes a stopped or failed turn with (bot's stopNote, chat's
// failedNote).
var runtimeNoteStarts = []string{
	"[session start]",
	"[The runtime summarized",
	"(Runtime:",
	"(The user stopped this turn",
	"(This turn failed",
}

// menuPickStart starts the note pickNote adds after the user's words when
// they pick a menu item (engine/menu).
const menuPickStart = "(The user picked menu item "

// IsRuntimeNote reports whether a message's text was written by the
// runtime, not by the user or the model.
func IsRuntimeNote(text string) bool {
	text = strings.TrimSpace(text)
	for _, p := range runtimeNoteStarts {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// splitRuntimeNote splits a user-role message into the user's words and
// the runtime's note: all of it for a runtime note, the part from
// menuPickStart for a menu pick, none otherwise.
func splitRuntimeNote(text string) (user, note string) {
	text = strings.TrimSpace(text)
	if IsRuntimeNote(text) {
		return "", text
	}
	if strings.HasPrefix(text, menuPickStart) {
		return "", text
	}
	if i := strings.LastIndex(text, "\n\n"+menuPickStart); i >= 0 {
		return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i:])
	}
	return text, ""
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
func (t Tools) summarizeResult(tc transcript.ToolCall, content string) string {
	var r map[string]any
	if json.Unmarshal([]byte(content), &r) != nil {
		return fmt.Sprintf("%d bytes", len(content))
	}
	if e, ok := r["elided"].(string); ok {
		return e
	}
	return t.Summary(tc, content)
}
