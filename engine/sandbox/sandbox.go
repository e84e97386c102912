// Package sandbox is the only place paths resolve. It maps the virtual paths
// the model sees onto allowed roots, each opened with os.Root (or an fs.FS for
// the embedded core), and refuses everything else.
//
// Virtual paths are slash-separated and absolute: /project, /core, /outputs
// and /inputs. Relative paths resolve under /project for reads and /outputs
// for writes; when a relative read is missing from /project, ReadFile, List
// and Exists look for the same name under /outputs and then /inputs, so a
// file the model saved as "prd.md" reads back as "prd.md". Resolve itself is
// purely lexical and does no I/O.
//
// A policy screens every read mount but the session's own /outputs: names
// matching DefaultDeny or Config.Deny (secrets, credentials) are refused
// as denied by policy, and the Config.Hidden folders (agentbot's data
// folder, holding every session) are never shown under /project, /core or
// /skills, by any name or link: a path into them reads as missing. Both
// hold for reads, Exists, List, Glob and the names a not-found error
// suggests.
//
// Errors returned to the model are *Error values: short, saying what is
// allowed, and never naming a host path.
package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"agentbot/engine/vars"
)

// The virtual mount points the model sees. Host paths never reach the model.
const (
	ProjectDir = "/project" // the agent's bundle or BMAD project root, read-only
	CoreDir    = "/core"    // the core: embedded, or the BMAD install's core/
	OutputDir  = "/outputs" // this session's outputs, read-write
	InputDir   = "/inputs"  // files users shared in this session, read-only
	SkillsDir  = "/skills"  // the shared folder of Agent Skills, read-only
)

// DefaultMax is the default cap, in bytes, of MaxRead and MaxWrite.
const DefaultMax = 1 << 20

// Config says what a sandbox may open.
type Config struct {
	ProjectRoot string // host directory mounted at ProjectDir
	CoreRoot    string // host directory mounted at CoreDir; empty uses CoreFS
	CoreFS      fs.FS
	OutputRoot  string // host directory mounted at OutputDir (created)
	InputRoot   string // host directory mounted at InputDir (may be missing)
	SkillsRoot  string // host directory mounted at SkillsDir
	// OutputAliases are virtual folders that are this session's outputs
	// under another name, such as "/project/_bmad-output": BMAD's artifact
	// folders, so that reads and writes there reach /outputs.
	OutputAliases []string
	// FolderAliases map other virtual folders to folders under /outputs,
	// such as BMAD's project_knowledge ("/project/docs" to
	// "/outputs/docs") when a project keeps it as documents.
	FolderAliases []Alias
	// Hidden are host folders /project, /core and /skills never show,
	// whatever the layout or links: agentbot's own data folder. They are
	// compared by real path and by identity.
	Hidden []string
	// Deny adds name patterns to DefaultDeny, which no read mount but
	// /outputs shows.
	Deny []string
	// Vars resolve path variables such as {project-root} or {output_folder}.
	Vars vars.Vars
	// MaxRead and MaxWrite cap file sizes in bytes (defaults 1 MiB).
	MaxRead  int64
	MaxWrite int64
}

// Alias names a folder under /outputs (To) by another virtual path
// (From); reads and writes under From reach To.
type Alias struct {
	From, To string
}

// aliasesOf returns the config's output and folder aliases, clean: each
// from a folder other than / and /outputs to /outputs or a folder in it.
func aliasesOf(cfg Config) []Alias {
	var all []Alias
	for _, a := range cfg.OutputAliases {
		all = append(all, Alias{From: a, To: OutputDir})
	}
	all = append(all, cfg.FolderAliases...)
	var out []Alias
	for _, a := range all {
		from, to := path.Clean("/"+strings.Trim(a.From, "/")), path.Clean("/"+strings.Trim(a.To, "/"))
		if from != "/" && from != OutputDir && (to == OutputDir || strings.HasPrefix(to, OutputDir+"/")) {
			out = append(out, Alias{From: from, To: to})
		}
	}
	return out
}

// Sandbox resolves and opens paths for one session. It is safe for
// concurrent use.
type Sandbox struct {
	project, core, outputs, inputs, skills mount
	aliases                                []Alias
	maxRead, maxWrite                      int64
	policy                                 policy
	// view holds the variables and the folder relative reads try first; a
	// skill the model loads changes it while calls run.
	view atomic.Pointer[view]

	mu     sync.Mutex // guards inputs.root, inputs.fsys and closed
	closed bool
}

// mount is one virtual folder and what backs it.
type mount struct {
	dir  string // virtual path, e.g. "/project"
	name string // dir without the slash, e.g. "project"
	// host is the absolute, clean host root ("" for an fs.FS or no root);
	// real is host with symlinks evaluated, when that differs.
	host, real string
	root       *os.Root    // nil for an fs.FS, a missing /inputs or no root
	hide       []hiddenDir // hidden folders this mount must not show
	fsys       fs.FS       // what reads go through; nil when unavailable
	// ok is set by Open when the mount is configured. Unlike root and fsys
	// of /inputs it never changes afterwards, so it needs no lock.
	ok bool
}

// available reports whether the mount is configured in this session.
func (m *mount) available() bool { return m.ok }

// realRoot is the mount's host root with symlinks resolved ("" for none).
func (m *mount) realRoot() string {
	if m.real != "" {
		return m.real
	}
	return m.host
}

// Open opens every root of cfg. A root left empty is not available in the
// session; InputRoot may not exist yet and is opened when it appears.
func Open(cfg Config) (*Sandbox, error) {
	s := &Sandbox{
		project:  mount{dir: ProjectDir, name: ProjectDir[1:]},
		core:     mount{dir: CoreDir, name: CoreDir[1:]},
		outputs:  mount{dir: OutputDir, name: OutputDir[1:]},
		inputs:   mount{dir: InputDir, name: InputDir[1:]},
		skills:   mount{dir: SkillsDir, name: SkillsDir[1:]},
		maxRead:  cfg.MaxRead,
		maxWrite: cfg.MaxWrite,
	}
	s.view.Store(&view{vars: cfg.Vars})
	s.aliases = aliasesOf(cfg)
	if s.maxRead <= 0 {
		s.maxRead = DefaultMax
	}
	if s.maxWrite <= 0 {
		s.maxWrite = DefaultMax
	}
	if err := s.openRoots(cfg); err != nil {
		s.Close()
		return nil, err
	}
	p, err := newPolicy(cfg.Hidden, cfg.Deny)
	if err != nil {
		s.Close()
		return nil, &Error{Op: "open", Msg: err.Error(), Err: err}
	}
	s.policy = p
	for _, m := range []*mount{&s.project, &s.core, &s.skills} {
		if m.host != "" {
			m.hide = hiddenFor(s.policy.hidden, m.realRoot())
		}
	}
	return s, nil
}

// hostRoot is a mount Open backs with a host folder of the config.
type hostRoot struct {
	m       *mount
	dir     string // the configured folder; "" leaves the mount as it is
	create  bool   // create the folder when missing (/outputs)
	mayMiss bool   // a missing folder is opened when it appears (/inputs)
	fail    string // the refusal when the folder cannot be opened
}

// openRoots opens the host folders of cfg in the order the mounts are
// offered, or backs /core with cfg.CoreFS when it has no folder. The
// first that fails is returned as an *Error; the caller closes what
// opened.
func (s *Sandbox) openRoots(cfg Config) error {
	const cannot = "the folder cannot be opened"
	for _, r := range []hostRoot{
		{m: &s.project, dir: cfg.ProjectRoot, fail: cannot},
		{m: &s.core, dir: cfg.CoreRoot, fail: cannot},
		{m: &s.outputs, dir: cfg.OutputRoot, create: true, fail: "the folder cannot be created or opened"},
		{m: &s.inputs, dir: cfg.InputRoot, mayMiss: true, fail: cannot},
		{m: &s.skills, dir: cfg.SkillsRoot, fail: cannot},
	} {
		if r.dir == "" {
			continue
		}
		err := r.m.openHost(r.dir, r.create)
		if err != nil && !(r.mayMiss && errors.Is(err, fs.ErrNotExist)) {
			return &Error{Op: "open", Path: r.m.dir, Msg: r.fail, Err: err}
		}
	}
	if cfg.CoreRoot == "" && cfg.CoreFS != nil {
		s.core.fsys, s.core.ok = cfg.CoreFS, true
	}
	return nil
}

// view is what SetBase changes: the variables, and the folder relative
// reads try first.
type view struct {
	vars vars.Vars
	base string
}

// SetBase makes relative reads try the virtual folder base first (the
// active skill's folder) and adds extra variables, such as {skill-root},
// to those paths expand with. An empty base restores plain relative reads.
func (s *Sandbox) SetBase(base string, extra vars.Vars) {
	cur := s.view.Load()
	v := make(vars.Vars, len(cur.vars)+len(extra))
	for k, val := range cur.vars {
		v[k] = val
	}
	for k, val := range extra {
		v[k] = val
	}
	s.view.Store(&view{vars: v, base: base})
}

// openHost records dir as the mount's host root and opens it with
// os.OpenRoot, creating it first when create is set. When the directory is
// missing, host and real are still recorded and the error is fs.ErrNotExist.
func (m *mount) openHost(dir string, create bool) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	m.host, m.ok = abs, true
	if create {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return err
		}
	}
	m.real = realPath(abs)
	r, err := os.OpenRoot(abs)
	if err != nil {
		return err
	}
	m.root, m.fsys = r, r.FS()
	return nil
}

// realPath returns abs with symlinks evaluated, or "" when that equals abs.
// When abs does not exist yet its deepest existing folder is evaluated.
func realPath(abs string) string {
	if r := realOrClean(abs); r != abs {
		return r
	}
	return ""
}

// Close releases the roots. Later calls fail with "sandbox is closed".
func (s *Sandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, m := range s.mounts() {
		if m.root != nil {
			errs = append(errs, m.root.Close())
		}
	}
	return errors.Join(errs...)
}

// mounts returns the mounts in the order they are offered to the model.
func (s *Sandbox) mounts() [5]*mount {
	return [5]*mount{&s.project, &s.core, &s.outputs, &s.inputs, &s.skills}
}

// mountNamed returns the mount whose virtual name (without slash) is name.
func (s *Sandbox) mountNamed(name string) *mount {
	switch name {
	case s.project.name:
		return &s.project
	case s.core.name:
		return &s.core
	case s.outputs.name:
		return &s.outputs
	case s.inputs.name:
		return &s.inputs
	case s.skills.name:
		return &s.skills
	}
	return nil
}

// access returns the fs.FS and os.Root of m, opening /inputs the first time
// it exists. fsys is nil when the mount has nothing to read (yet).
func (s *Sandbox) access(m *mount) (fs.FS, *os.Root, error) {
	if m != &s.inputs {
		return m.fsys, m.root, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, os.ErrClosed
	}
	if m.root == nil && m.host != "" {
		r, err := os.OpenRoot(m.host)
		switch {
		case err == nil:
			m.root, m.fsys = r, r.FS()
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, err
		}
	}
	return m.fsys, m.root, nil
}
