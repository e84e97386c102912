package party

import (
	"fmt"
	"strings"
)

// Voice is what a persona's own sub-turn knows of the persona: the
// member, and, for an installed agent, its definition's persona texts.
type Voice struct {
	Member
	Role, Identity, Style, Principles string
}

// MaxVoiceWords bounds a persona's turn in a round (the prompt asks for
// it; the runtime cuts nothing).
const MaxVoiceWords = 150

// Prompt is the system prompt of a persona's sub-turn: who the persona is
// (from its definition), the room's scene, and how to answer: one turn in
// the persona's own voice, for the orchestrator to place in the
// conversation as written.
func (v Voice) Prompt(scene string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s", v.Name)
	if v.Title != "" {
		fmt.Fprintf(&b, ", %s", v.Title)
	}
	if v.Icon != "" {
		fmt.Fprintf(&b, " %s", v.Icon)
	}
	b.WriteString(".\n")
	for _, f := range []struct{ label, text string }{
		{"Your role", v.Role}, {"Who you are", v.Identity}, {"How you talk", v.Style},
		{"What you hold to", v.Principles}, {"Your persona", v.Persona},
		{"What you can do", v.Capabilities}, {"What others know of you", v.Description},
	} {
		if t := strings.TrimSpace(f.text); t != "" {
			fmt.Fprintf(&b, "\n## %s\n%s\n", f.label, t)
		}
	}
	if s := strings.TrimSpace(scene); s != "" {
		fmt.Fprintf(&b, "\n## The room\n%s\n", s)
	}
	fmt.Fprintf(&b, `
## This turn
You are one of several people in a live group conversation with a user; the others think for themselves at the same time. Below is the conversation so far and what the room is on now. Think it through on your own and say what you, and only you, would say next: your real view, in your own voice, agreeing or pushing back as you honestly would. Talk to the user and the others directly. Keep it short (at most about %d words) unless asked for more. Write only your own words: no name header, no lines for anyone else, no summary of the room. You may read project files with the read-only tools when it helps.`, MaxVoiceWords)
	return b.String()
}
