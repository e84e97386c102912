package catalog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"agentbot/engine/hostfile"
	"agentbot/engine/vars"
)

// maxFileSize caps the agent, manifest and config files the catalog reads.
const maxFileSize = 4 << 20

// loader collects agents and problems during one Load.
type loader struct {
	agents   []*Agent
	skills   []*Skill
	problems []Problem
	seen     map[string]bool // directories already loaded
}

func newLoader() *loader {
	return &loader{seen: map[string]bool{}}
}

// problem records one thing that could not be loaded.
func (l *loader) problem(path, format string, args ...any) {
	l.problems = append(l.problems, Problem{Path: path, Reason: fmt.Sprintf(format, args...)})
}

// once reports whether dir is loaded for the first time in this Load.
func (l *loader) once(dir string) bool {
	if l.seen[dir] {
		return false
	}
	l.seen[dir] = true
	return true
}

// add appends a loaded agent.
func (l *loader) add(a *Agent) {
	l.agents = append(l.agents, a)
}

// readFile reads a regular file of at most maxFileSize bytes; a FIFO or
// device is refused without blocking.
func readFile(path string) ([]byte, error) {
	return hostfile.Read(path, maxFileSize)
}

// readAgent reads and parses one agent file.
func readAgent(path string) (*Agent, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseAgent(path, data)
}

// reason renders a read or parse error as a plain reason.
func reason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "file not found"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// loadConfig reads a config.yaml into h when the file exists. A broken
// config is a problem, but the agents that use it still load.
func (l *loader) loadConfig(h *Home, path string) {
	if special(path) {
		l.problem(path, "config: %s", hostfile.ErrNotRegular)
		return
	}
	if !isFile(path) {
		return
	}
	h.ConfigPath = path
	data, err := readFile(path)
	if err != nil {
		l.problem(path, "config: %s", reason(err))
		return
	}
	cfg, err := vars.ParseConfig(data)
	if err != nil {
		l.problem(path, "config: %s", err)
		return
	}
	h.Config = cfg
}

// isDir reports whether path is a directory (following symlinks).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// isFile reports whether path is a regular file (following symlinks).
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// special reports whether path (following symlinks) is neither a regular
// file nor a folder: a FIFO, socket or device. The catalog never opens one;
// where a file it would read is one, that is a problem ("not a regular
// file"), never a silent skip.
func special(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// absPath cleans a path and makes it absolute when it can.
func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// checkDir returns a plain reason when path is not a usable directory.
func checkDir(path string) string {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "not found"
	case err != nil:
		return reason(err)
	case !st.IsDir():
		return "not a directory"
	}
	return ""
}

// subdirs lists the directories inside dir, sorted, skipping hidden ones.
func subdirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if e.IsDir() || (e.Type()&fs.ModeSymlink != 0 && isDir(p)) {
			out = append(out, p)
		}
	}
	return out
}
