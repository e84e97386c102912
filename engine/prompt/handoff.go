package prompt

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"agentbot/engine/transcript"
)

// maxHandoffQuestion bounds the open question a handoff quotes.
const maxHandoffQuestion = 400

// Handoff summarizes a thread's earlier session for the agent taking the
// thread over (`use architect`): who worked here before, what they
// produced, and the last open question; person is who worked with them,
// as they are called (a display name; "" when unknown). It is "" for a session that holds no agent's work. The caller sets it as the new session's Handoff before
// activating it; activation adds it to the system prompt.
func Handoff(prev *transcript.Session, person string) string {
	if prev == nil || prev.AgentID == "" {
		return ""
	}
	who := prev.AgentID
	if a := prev.Agent; a != nil && a.Name != "" {
		who = strings.TrimSpace(a.Icon+" "+a.Name) + " (" + prev.AgentID
		if a.Title != "" {
			who += ", " + a.Title
		}
		who += ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Before you, %s worked in this thread", who)
	if person != "" {
		fmt.Fprintf(&b, " with %s", person)
	}
	b.WriteString(".")
	if docs := transcript.Documents(prev.Outputs); len(docs) > 0 {
		b.WriteString(" They produced:")
		for i, d := range docs {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " /outputs/%s (v%d)", d.Path, d.Shown())
		}
		b.WriteString(". Read what you build on before you change it.")
	} else {
		b.WriteString(" They saved no document.")
	}
	if q := openQuestion(prev); q != "" {
		fmt.Fprintf(&b, " Their last open question: %q", q)
	}
	return b.String()
}

// openQuestion is the last question the session's agent asked, when no
// one answered it (the transcript ends with the agent's answer), else "".
func openQuestion(s *transcript.Session) string {
	if len(s.Messages) == 0 {
		return ""
	}
	last := s.Messages[len(s.Messages)-1]
	if last.Role != transcript.RoleAssistant || len(last.ToolCalls) > 0 {
		return ""
	}
	text := strings.TrimSpace(last.Content)
	end := strings.LastIndexByte(text, '?')
	if end < 0 {
		return ""
	}
	start := strings.LastIndexAny(text[:end], ".!?\n") + 1
	q := strings.TrimSpace(text[start : end+1])
	if len(q) > maxHandoffQuestion {
		cut := len(q) - maxHandoffQuestion
		for cut < len(q) && !utf8.RuneStart(q[cut]) {
			cut++
		}
		q = "…" + q[cut:]
	}
	return q
}

// WithHandoff adds a session's handoff, if any, to a system prompt.
func WithHandoff(handoff, prompt string) string {
	if handoff == "" {
		return prompt
	}
	return prompt + "\n\n## Handoff\n" + handoff
}
