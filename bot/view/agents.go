package view

import (
	"fmt"
	"path/filepath"
	"strings"

	"agentbot/bot/slackmd"
	"agentbot/engine/catalog"
	"agentbot/engine/transcript"
)

// AgentName is an agent's icon and name: "🧭 John".
func AgentName(a *catalog.Agent) string { return strings.TrimSpace(a.Icon + " " + a.Name) }

// Persona is how an agent shows itself: icon, name and title.
func Persona(a *catalog.Agent) string {
	label := a.Name
	if a.Icon != "" {
		label = a.Icon + " " + label
	}
	if a.Title != "" && a.Title != a.Name {
		label += " — " + a.Title
	}
	return label
}

// AgentLabels labels agents for buttons: icon, name and title, followed,
// where several agents show the same persona, by what tells them apart
// (PersonaOrigins).
func AgentLabels(agents []*catalog.Agent) []string {
	origins := PersonaOrigins(agents)
	out := make([]string, len(agents))
	for i, a := range agents {
		suffix := ""
		if origins[i] != "" {
			suffix = " (" + origins[i] + ")"
		}
		out[i] = ButtonLabel(Persona(a), suffix)
	}
	return out
}

// PersonaOrigins tells apart agents that show the same persona (one BMAD
// agent in several installs and modules): for each, "" when its persona
// is unique, else its module and install (AgentOrigin), or its id where
// even those repeat.
func PersonaOrigins(agents []*catalog.Agent) []string {
	seen := map[string]int{}
	for _, a := range agents {
		seen[Persona(a)]++
	}
	origins := make([]string, len(agents))
	again := map[string]int{}
	for i, a := range agents {
		if seen[Persona(a)] > 1 {
			origins[i] = AgentOrigin(a)
			again[Persona(a)+"\x00"+origins[i]]++
		}
	}
	for i, a := range agents {
		if origins[i] != "" && again[Persona(a)+"\x00"+origins[i]] > 1 {
			origins[i] = a.ID
		}
	}
	return origins
}

// AgentOrigin names where an agent comes from: its module and, for BMAD,
// the install (the folder holding it).
func AgentOrigin(a *catalog.Agent) string {
	origin := a.Module
	if a.Home != nil && a.Home.Kind == "bmad" && a.Home.ProjectRoot != "" {
		if origin != "" {
			origin += " · "
		}
		origin += filepath.Base(a.Home.ProjectRoot)
	}
	if origin == "" {
		return a.ID
	}
	return origin
}

// AgentList lists the agents people can pick, for /agent list.
func AgentList(agents []*catalog.Agent) string {
	if len(agents) == 0 {
		return "No agents are loaded."
	}
	var s strings.Builder
	s.WriteString("Agents:")
	for _, a := range agents {
		fmt.Fprintf(&s, "\n• %s *%s* — %s (`%s`)", a.Icon, a.Name, a.Title, a.ID)
		if a.Description != "" {
			s.WriteString(": " + a.Description)
		}
	}
	return s.String()
}

// SessionTitle names a session after its agent and, once one runs, its
// skill (nil: none).
func SessionTitle(a *catalog.Agent, skill *transcript.ActiveSkill) string {
	title := a.Name
	if a.Title != "" && a.Title != a.Name {
		title += " — " + a.Title
	}
	if skill != nil && skill.Name != a.SkillName {
		title += ": " + skill.Name
	}
	return slackmd.Shorten(title, 80)
}
