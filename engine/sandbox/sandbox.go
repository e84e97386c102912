// Package sandbox is the only place paths resolve. It maps the virtual paths
// the model sees onto allowed roots, each opened with os.Root (or an fs.FS for
// the embedded core), and refuses everything else.
package sandbox

import (
	"io/fs"

	"agentbot/engine/vars"
)

// The virtual mount points the model sees. Host paths never reach the model.
const (
	ProjectDir = "/project" // the agent's bundle or BMAD project root, read-only
	CoreDir    = "/core"    // the core: embedded, or the BMAD install's core/
	OutputDir  = "/outputs" // this session's outputs, read-write
	InputDir   = "/inputs"  // files users shared in this session, read-only
)

// Config says what a sandbox may open.
type Config struct {
	ProjectRoot string // host directory mounted at ProjectDir
	CoreRoot    string // host directory mounted at CoreDir; empty uses CoreFS
	CoreFS      fs.FS
	OutputRoot  string // host directory mounted at OutputDir (created)
	InputRoot   string // host directory mounted at InputDir (may be missing)
	// Vars resolve path variables such as {project-root} or {output_folder}.
	Vars vars.Vars
	// MaxRead and MaxWrite cap file sizes in bytes (defaults 1 MiB).
	MaxRead  int64
	MaxWrite int64
}

// Sandbox resolves and opens paths for one session.
type Sandbox struct{}

// Open opens every root of cfg.
func Open(cfg Config) (*Sandbox, error) { panic("todo") }

// Close releases the roots.
func (s *Sandbox) Close() error { panic("todo") }

// Resolve returns the clean virtual path for p, or an error saying what is
// allowed. Relative paths resolve under ProjectDir for reads and OutputDir
// for writes.
func (s *Sandbox) Resolve(p string, write bool) (string, error) { panic("todo") }

// ReadFile reads p and returns its content and virtual path.
func (s *Sandbox) ReadFile(p string) ([]byte, string, error) { panic("todo") }

// WriteFile writes data at p under OutputDir, creating directories, and
// returns the virtual path.
func (s *Sandbox) WriteFile(p string, data []byte) (string, error) { panic("todo") }

// HostPath returns the host path of a virtual path under OutputDir or
// InputDir, for uploads.
func (s *Sandbox) HostPath(virtual string) (string, error) { panic("todo") }
