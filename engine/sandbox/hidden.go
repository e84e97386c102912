package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// hiddenDir is a host folder no read mount shows.
type hiddenDir struct {
	real string      // absolute path, symlinks resolved
	info fs.FileInfo // identity for os.SameFile; nil when it does not exist
}

// newHidden records the hidden host folders, by real path and identity.
func newHidden(dirs []string) []hiddenDir {
	var out []hiddenDir
	for _, h := range dirs {
		if strings.TrimSpace(h) == "" {
			continue
		}
		d := hiddenDir{real: realOrClean(h)}
		if fi, err := os.Stat(d.real); err == nil && fi.IsDir() {
			d.info = fi
		}
		out = append(out, d)
	}
	return out
}

// hiddenFor returns the folders of hidden that a mount with the real root
// must not show: all but those holding the root below them. A mount inside
// the data folder stays readable, since os.Root keeps it from reaching the
// rest; a mount that is the data folder shows nothing.
func hiddenFor(hidden []hiddenDir, root string) []hiddenDir {
	var out []hiddenDir
	for _, h := range hidden {
		if root != h.real && within(h.real, root) {
			continue
		}
		out = append(out, h)
	}
	return out
}

// hides reports whether real, a real host path under mount m, is or lies
// in one of m's hidden folders: by path, or by identity, which also
// catches the folder under another name (a case-insensitive file system,
// a bind mount).
func (m *mount) hides(real string) bool {
	if m.hidesByPath(real) {
		return true
	}
	root := m.realRoot()
	for dir := real; within(root, dir); dir = filepath.Dir(dir) {
		if isHiddenDir(dir, m.hide) {
			return true
		}
		if dir == root {
			break
		}
	}
	return false
}

// hidesByPath reports whether real, a real host path, is or lies in one
// of m's hidden folders by path alone.
func (m *mount) hidesByPath(real string) bool {
	for _, h := range m.hide {
		if within(h.real, real) {
			return true
		}
	}
	return false
}

// isHiddenDir reports whether the folder dir is one of hidden.
func isHiddenDir(dir string, hidden []hiddenDir) bool {
	var fi fs.FileInfo
	for _, h := range hidden {
		if h.info == nil {
			continue
		}
		if fi == nil {
			var err error
			if fi, err = os.Stat(dir); err != nil || !fi.IsDir() {
				return false
			}
		}
		if os.SameFile(fi, h.info) {
			return true
		}
	}
	return false
}

// realOrClean is p made absolute with symlinks resolved; when p does not
// exist, its deepest existing folder is resolved and the rest kept.
func realOrClean(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	rest := ""
	for dir := abs; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// within reports whether p is root or lies below it.
func within(root, p string) bool {
	_, ok := hostRel(root, p)
	return ok
}
