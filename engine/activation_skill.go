package engine

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/prompt"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
)

// activateSkill activates a skill-format agent with no model call: the
// customization and config are resolved in Go, the persona and facts go
// into the byte-stable system prompt, and the greeting and menu are the
// agent's own. An agent whose customization is invalid does not start.
func (e *Engine) activateSkill(ctx context.Context, s *Session, a *catalog.Agent, preset map[string]string) (*Greeting, error) {
	if a.Problem != "" {
		return nil, fmt.Errorf("agent %s cannot start: %s", a.ID, a.Problem)
	}
	v := skillVars(a)
	v["date"] = s.Date
	mergePreset(v, preset)
	s.Vars = v
	s.Skill = nil
	if root := v["skill-root"]; root != "" {
		s.Skill = &transcript.ActiveSkill{Name: a.SkillName, Root: root, Vars: map[string]string{"skill-root": root, "skill-name": a.SkillName}}
	}
	sb, err := e.openSandbox(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("activate %s: %w", a.ID, err)
	}
	defer sb.Close()
	hideHostPaths(v, sb)
	g := prompt.GreetSkill(a, v)
	s.Messages = append(s.Messages[:0],
		transcript.Message{Role: transcript.RoleSystem, Content: prompt.WithHandoff(s.Handoff, prompt.Skill(a, v, sb, e.catalog().SkillsFor(a), toolRules(e.toolsFor(s))))},
		transcript.Message{Role: transcript.RoleUser, Content: prompt.SkillSessionFacts(a, v)},
		transcript.Message{Role: transcript.RoleAssistant, Content: g.Text},
	)
	if err := e.save(ctx, s); err != nil {
		return nil, fmt.Errorf("activate %s: save session: %w", a.ID, err)
	}
	return g, nil
}

// skillVars returns the variables of a skill-format agent's session: the
// sandbox's folders, the project's central config with BMAD's artifact
// folders mapped to /outputs, {skill-root}, {skill-name} and {agent.X}.
func skillVars(a *catalog.Agent) vars.Vars {
	v := pathVars(a)
	if a.Home != nil {
		mergeConfig(v, a.Home.Config)
		mapOutputs(v, a.Home.OutputFolder)
	}
	if a.SkillName != "" {
		v["skill-name"] = a.SkillName
		if root := skillRootOf(a); root != "" {
			v["skill-root"] = root
		}
	}
	for k, val := range a.Fields {
		v[k] = val
	}
	return v
}

// mapOutputs points config values under the project's artifact folder
// (/project/_bmad-output/...) at the session's /outputs.
func mapOutputs(v vars.Vars, outputFolder string) {
	if outputFolder == "" {
		return
	}
	alias := path.Join(sandbox.ProjectDir, outputFolder)
	for k, val := range v {
		// Under /project/_bmad-output, or relative to the project as the
		// tea module writes its paths (_bmad-output/test-artifacts).
		for _, prefix := range []string{alias, outputFolder} {
			if rest, ok := strings.CutPrefix(val, prefix); ok && (rest == "" || rest[0] == '/') {
				v[k] = sandbox.OutputDir + rest
				break
			}
		}
	}
}

// outputAliases are the virtual folders a session's sandbox maps to /outputs.
func outputAliases(a *catalog.Agent) []string {
	if a == nil || a.Home == nil || a.Home.OutputFolder == "" {
		return nil
	}
	return []string{path.Join(sandbox.ProjectDir, a.Home.OutputFolder)}
}

// skillRootOf is the virtual folder of a skill agent's own skill.
func skillRootOf(a *catalog.Agent) string {
	if a.Home == nil || a.Home.ProjectRoot == "" || a.Path == "" {
		return ""
	}
	rel, err := filepath.Rel(a.Home.ProjectRoot, filepath.Dir(a.Path))
	if err != nil || !filepath.IsLocal(rel) {
		return ""
	}
	return path.Join(sandbox.ProjectDir, filepath.ToSlash(rel))
}
