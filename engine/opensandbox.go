package engine

import (
	"context"
	"path"
	"path/filepath"
	"strings"

	"agentbot/engine/project"
	"agentbot/engine/sandbox"
	"agentbot/engine/vars"
)

// openSandbox opens the sandbox of a session's agent.
func (e *Engine) openSandbox(ctx context.Context, s *Session) (*sandbox.Sandbox, error) {
	a := s.AgentDef
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
	pf, err := e.projectOf(ctx, s)
	if err != nil {
		return nil, err
	}
	s.project = pf
	if pf != nil {
		// The project's documents and shared files (engine/project).
		cfg.OutputRoot, cfg.InputRoot = pf.Docs(), pf.Inputs()
		if err := pf.Sync(ctx, e.cfg.Projects.Store, project.BaseLayers(a, append(append([]string(nil), e.cfg.Hidden...), pf.Root()), e.cfg.Deny)); err != nil {
			e.cfg.Logger.Error("project: bring the documents up to date", "project", pf.Name(), "session", s.ID, "err", err)
		}
		if k := project.KnowledgeFolder(a); k != "" {
			// project_knowledge is project documents too, under its name.
			cfg.FolderAliases = []sandbox.Alias{{From: path.Join(sandbox.ProjectDir, k), To: path.Join(sandbox.OutputDir, k)}}
		}
	}
	cfg.SkillsRoot = e.catalog().SkillsDir
	cfg.Hidden, cfg.Deny = e.cfg.Hidden, e.cfg.Deny
	cfg.OutputAliases = outputAliases(a)
	sb, err := sandbox.Open(cfg)
	if err != nil {
		return nil, err
	}
	if pf == nil {
		newOutputSync(e, s).run(ctx, cfg.OutputRoot, cfg.InputRoot)
	}
	if s.Skill != nil {
		sb.SetBase(s.Skill.Root, s.Skill.Vars)
	}
	return sb, nil
}

// hostPathNote stands in for a config value that is a host path the model
// cannot reach.
const hostPathNote = "(a folder outside this agent's files, not available here)"

// hideHostPaths replaces config values that are absolute host paths by
// their virtual path (/project/...), or by a note when the model cannot
// reach them, so no host path reaches a prompt.
func hideHostPaths(v vars.Vars, sb *sandbox.Sandbox) {
	for k, val := range v {
		p := strings.TrimSpace(val)
		if !filepath.IsAbs(p) || isVirtual(p) {
			continue
		}
		if virtual, ok := sb.Virtual(p); ok {
			v[k] = virtual
		} else {
			v[k] = hostPathNote
		}
	}
}

// isVirtual reports whether p is under one of the sandbox's folders.
func isVirtual(p string) bool {
	for _, d := range []string{sandbox.ProjectDir, sandbox.CoreDir, sandbox.OutputDir, sandbox.InputDir, sandbox.SkillsDir} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
