package engine

import (
	"context"
	"fmt"
	"path"
	"path/filepath"

	"agentbot/engine/project"
	"agentbot/engine/transcript"
)

// ProjectStore keeps projects' shared, versioned documents (see
// project.Store); both stores meet it (storage.Projects).
type ProjectStore = project.Store

// Projects configures shared documents (Config.Projects).
type Projects struct {
	Store ProjectStore
	// Of names the project of a session key ("" : the session keeps its
	// own /outputs, as without projects). An error (the store did not
	// answer) fails the turn as the store's (SaveError), never a guess: a
	// document must not land in another project.
	Of func(ctx context.Context, sessionKey string) (string, error)
	// Root is the host folder where this process keeps its working copy
	// of a project's documents (and the files people shared in it).
	Root func(project string) string
}

// projectOf returns the working copy of the session's project, or nil
// when the session keeps its own /outputs; the error is the store's
// (SaveError). A turn asks once, when it opens its sandbox
// (Session.project); its tools use that answer.
func (e *Engine) projectOf(ctx context.Context, s *Session) (*project.Folder, error) {
	p := e.cfg.Projects
	if p == nil || p.Store == nil || p.Of == nil || p.Root == nil {
		return nil, nil
	}
	name, err := p.Of(ctx, s.Key)
	if err != nil {
		return nil, &SaveError{Err: fmt.Errorf("project of session %s: %w", s.ID, err)}
	}
	if name == "" {
		return nil, nil
	}
	if pf, ok := e.projects.Load(name); ok {
		return pf.(*project.Folder), nil
	}
	pf, _ := e.projects.LoadOrStore(name, project.New(name, p.Root(name)))
	return pf.(*project.Folder), nil
}

// KeepInput stores a file person shared into the session, which the
// caller has written to the session's /inputs folder as name, as an
// internal output (transcript.InputPrefix), so that a replica taking the
// thread over restores it there. In a project, it becomes a file of the
// project, which every thread of it reads under /inputs, and person (who
// shared it, not whoever last wrote in the session) is the author of its
// version. A file shared again under the same name is a new version.
// Without an output store it does nothing; the caller saves the session.
func (e *Engine) KeepInput(ctx context.Context, s *Session, person, name string, data []byte) error {
	pf, err := e.projectOf(ctx, s)
	if err != nil {
		return fmt.Errorf("keep shared file %s: %w", name, err)
	}
	if e.cfg.Outputs == nil && pf == nil {
		return nil
	}
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("keep shared file %q: not a name inside /inputs", name)
	}
	p := transcript.InputPrefix + path.Clean(name)
	if pf != nil {
		return pf.Share(ctx, e.cfg.Projects.Store, &s.Session, person, p, data)
	}
	o := Output{Path: p, Size: int64(len(data)), Version: transcript.NextVersion(s.Outputs, p), Time: e.cfg.Now(), Internal: true}
	if err := e.stored.put(ctx, s.ID, o, data); err != nil {
		return fmt.Errorf("keep shared file %s: %w", name, err)
	}
	s.Outputs = append(s.Outputs, o)
	return nil
}
