package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/sandbox"
	"agentbot/engine/transcript"
	"agentbot/engine/vars"
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
	pf, err := e.projectOf(s)
	if err != nil {
		return nil, err
	}
	s.project = pf
	if pf != nil {
		// The project's documents and shared files (project.go).
		cfg.OutputRoot, cfg.InputRoot = pf.docs(), pf.inputs()
		if err := pf.sync(e.cfg.Projects.Store, baseLayers(a, append(append([]string(nil), e.cfg.Hidden...), pf.root), e.cfg.Deny)); err != nil {
			e.cfg.Logger.Error("project: bring the documents up to date", "project", pf.name, "session", s.ID, "err", err)
		}
		if k := knowledgeFolder(a); k != "" {
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
		e.syncOutputs(s, cfg.OutputRoot, cfg.InputRoot)
	}
	if s.Skill != nil {
		sb.SetBase(s.Skill.Root, s.Skill.Vars)
	}
	return sb, nil
}

// baseLayer is a folder of the BMAD root a project shows among its
// documents, read-only: a save there puts a project version on top.
type baseLayer struct {
	dir    string // host folder
	prefix string // document path of its files ("" or "docs/")
	// screen refuses what no read mount of dir shows: secret names and
	// hidden folders (agentbot's data folder, the project's own working
	// copy). /outputs shows every name, so such a file is never copied
	// into the project.
	screen sandbox.CopyScreen
}

// baseLayers are the BMAD root's own artifact folder, shown as the root
// of the project's documents, and its project_knowledge folder, shown
// under its own name (none without a BMAD root). Each is screened with
// the sandbox's policy of hidden folders and deny patterns.
func baseLayers(a *catalog.Agent, hidden, deny []string) []baseLayer {
	if a == nil || a.Home == nil || a.Home.ProjectRoot == "" || a.Home.OutputFolder == "" {
		return nil
	}
	dirs := []string{filepath.Join(a.Home.ProjectRoot, filepath.FromSlash(a.Home.OutputFolder))}
	prefixes := []string{""}
	if k := knowledgeFolder(a); k != "" {
		dirs = append(dirs, filepath.Join(a.Home.ProjectRoot, filepath.FromSlash(k)))
		prefixes = append(prefixes, k+"/")
	}
	var layers []baseLayer
	for i, dir := range dirs {
		screen, err := sandbox.NewCopyScreen(dir, hidden, deny)
		if err != nil {
			return nil // the sandbox refuses the same patterns when it opens
		}
		layers = append(layers, baseLayer{dir: dir, prefix: prefixes[i], screen: screen})
	}
	return layers
}

// knowledgeFolder is BMAD's project_knowledge folder ("docs" for
// "{project-root}/docs"), relative to the BMAD root, when it is a folder
// of its own beside the artifact folder ("" otherwise: missing, outside
// the root, or inside the artifact folder, which is a base layer
// already).
func knowledgeFolder(a *catalog.Agent) string {
	if a == nil || a.Home == nil || a.Home.OutputFolder == "" {
		return ""
	}
	k := strings.TrimSpace(a.Home.Config["project_knowledge"])
	k = strings.Trim(strings.TrimPrefix(k, "{project-root}"), "/")
	if k == "" || strings.ContainsAny(k, "{}") || !filepath.IsLocal(filepath.FromSlash(k)) {
		return ""
	}
	k = path.Clean(k)
	out := a.Home.OutputFolder
	if k == out || strings.HasPrefix(k, out+"/") || strings.HasPrefix(out, k+"/") {
		return ""
	}
	return k
}

// storedKey names a document version in Engine.stored.
func storedKey(sessionID string, o transcript.Output) string {
	return sessionID + "\x00" + o.Path + "\x00" + strconv.Itoa(o.Version)
}

// putOutput stores the bytes of a document version in the output store
// and marks the version stored.
func (e *Engine) putOutput(sessionID string, o transcript.Output, data []byte) error {
	if err := e.cfg.Outputs.PutOutput(context.TODO(), sessionID, o, data); err != nil {
		return err
	}
	e.stored.Store(storedKey(sessionID, o), struct{}{})
	return nil
}

// OutputData returns the bytes of a version of a session's document: from
// its project when the version is a project document's (stored once,
// there), else from the output store, where documents saved before
// projects stay readable.
func (e *Engine) OutputData(sessionID string, o transcript.Output) ([]byte, error) {
	if o.Project != "" {
		if e.cfg.Projects == nil || e.cfg.Projects.Store == nil {
			return nil, fmt.Errorf("%s v%d is a document of project %s, and projects are off", o.Path, o.Version, o.Project)
		}
		return e.cfg.Projects.Store.DocumentData(context.TODO(), o.Project, o.Path, o.DocVersion)
	}
	if e.cfg.Outputs == nil {
		return nil, fmt.Errorf("%s v%d: no output store", o.Path, o.Version)
	}
	return e.cfg.Outputs.OutputData(context.TODO(), sessionID, o.Path, o.Version)
}

// syncOutputs brings the session's output folder root up to date with the
// output store, so a replica taking a thread over sees the documents saved
// before: the latest version of each document that is missing locally, or
// whose size is not the recorded one, is written from the store. A
// document found only locally (saved before documents were stored) is
// stored from its file. Problems are logged; the turn goes on with what
// there is.
func (e *Engine) syncOutputs(s *Session, root, inputRoot string) {
	if e.cfg.Outputs == nil || root == "" || len(s.Outputs) == 0 {
		return
	}
	sy := &outputSync{e: e, session: s.ID, log: e.cfg.Logger.With("session", s.ID), roots: map[string]*os.Root{}}
	defer sy.close()
	for _, o := range transcript.Latest(s.Outputs) {
		dir, name := root, filepath.FromSlash(o.Path)
		if rest, ok := strings.CutPrefix(o.Path, transcript.InputPrefix); ok {
			dir, name = inputRoot, filepath.FromSlash(rest) // a file people shared
		}
		if !filepath.IsLocal(name) || dir == "" {
			sy.log.Warn("document path is not under /outputs; not synced", "path", o.Path)
			continue
		}
		if r := sy.open(dir); r != nil {
			sy.one(r, name, o)
		}
	}
}

// outputSync is one run of syncOutputs: the session, its log, and the
// folders opened so far.
type outputSync struct {
	e       *Engine
	session string
	log     *slog.Logger
	roots   map[string]*os.Root // nil where the folder could not be opened
}

// open returns the folder dir opened as a root, once per run; nil when it
// cannot be opened (logged).
func (sy *outputSync) open(dir string) *os.Root {
	if r, ok := sy.roots[dir]; ok {
		return r
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		sy.log.Error("open session folder", "err", err)
	}
	sy.roots[dir] = r
	return r
}

// close closes the folders the run opened.
func (sy *outputSync) close() {
	for _, r := range sy.roots {
		if r != nil {
			r.Close()
		}
	}
}

// one brings the document o, at name inside r, up to date with the store,
// or stores it from its file when only the file has it.
func (sy *outputSync) one(r *os.Root, name string, o transcript.Output) {
	key := storedKey(sy.session, o)
	fi, err := r.Stat(name)
	local := err == nil && fi.Mode().IsRegular() && fi.Size() == o.Size
	if _, ok := sy.e.stored.Load(key); ok && local {
		return
	}
	data, err := sy.e.OutputData(sy.session, o)
	switch {
	case err == nil:
		if !local || int64(len(data)) != fi.Size() {
			if werr := writeRooted(r, name, data); werr != nil {
				sy.log.Error("restore document from the store", "path", o.Path, "err", werr)
				return
			}
		}
		sy.e.stored.Store(key, struct{}{})
	case local:
		// Saved before documents lived in the store: store the file.
		data, rerr := r.ReadFile(name)
		if rerr == nil {
			rerr = sy.e.putOutput(sy.session, o, data)
		}
		if rerr != nil {
			sy.log.Error("store local document", "path", o.Path, "version", o.Version, "err", rerr)
			return
		}
		sy.log.Info("stored a document kept only locally", "path", o.Path, "version", o.Version)
	default:
		sy.log.Error("document is neither stored nor local", "path", o.Path, "version", o.Version, "err", err)
	}
}

// writeRooted writes data to name inside r, creating its folders.
func writeRooted(r *os.Root, name string, data []byte) error {
	if dir := filepath.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := r.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "write", Path: name, Err: errors.New("not a regular file")}
	}
	return r.WriteFile(name, data, 0o644)
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
