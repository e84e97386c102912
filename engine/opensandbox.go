package engine

import (
	"agentbot/engine/sandbox"
)

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
