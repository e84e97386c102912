package engine

import (
	"fmt"
	"path"
	"path/filepath"

	"agentbot/engine/transcript"
)

// KeepInput stores a file person shared into the session, which the
// caller has written to the session's /inputs folder as name, as an
// internal output (transcript.InputPrefix), so that a replica taking the
// thread over restores it there. In a project, it becomes a file of the
// project, which every thread of it reads under /inputs, and person (who
// shared it, not whoever last wrote in the session) is the author of its
// version. A file shared again under the same name is a new version.
// Without an output store it does nothing; the caller saves the session.
func (e *Engine) KeepInput(s *Session, person, name string, data []byte) error {
	pf, err := e.projectOf(s)
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
		return e.shareInput(pf, s, person, p, data) // project.go
	}
	o := Output{Path: p, Size: int64(len(data)), Version: transcript.NextVersion(s.Outputs, p), Time: e.cfg.Now(), Internal: true}
	if err := e.putOutput(s.ID, o, data); err != nil {
		return fmt.Errorf("keep shared file %s: %w", name, err)
	}
	s.Outputs = append(s.Outputs, o)
	return nil
}
