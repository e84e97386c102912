package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Temporary files of atomic writes are named tempPrefix + random + tempSuffix.
const (
	tempPrefix = ".sandbox-"
	tempSuffix = ".tmp"
)

// WriteFile writes data at p under OutputDir, creating directories, and
// returns the virtual path. The write is atomic: data goes to a temporary
// file in the same folder, which is then renamed over p. Content over
// MaxWrite is refused.
func (s *Sandbox) WriteFile(p string, data []byte) (string, error) {
	t, err := s.resolve("write", p, true)
	if err != nil {
		return "", err
	}
	if int64(len(data)) > s.maxWrite {
		return "", &Error{Op: "write", Path: t.virtual, Msg: fmt.Sprintf("content is too large to save (%s; the limit is %s)", SizeText(int64(len(data))), SizeText(s.maxWrite))}
	}
	_, root, err := s.access(t.m)
	if err != nil {
		return "", fsError("write", t.virtual, err)
	}
	dir := path.Dir(t.rel)
	if dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return "", mkdirError(t.virtual, virtualPath(t.m, dir), err)
		}
	}
	if fi, err := root.Stat(t.rel); err == nil && fi.IsDir() {
		return "", &Error{Op: "write", Path: t.virtual, Msg: "is a folder; give a file name inside it"}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fsError("write", t.virtual, err)
	}

	tmp := path.Join(dir, tempPrefix+strconv.FormatUint(rand.Uint64(), 36)+tempSuffix)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fsError("write", t.virtual, err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		root.Remove(tmp)
		return "", fsError("write", t.virtual, err)
	}
	if err := root.Rename(tmp, t.rel); err != nil {
		root.Remove(tmp)
		return "", fsError("write", t.virtual, err)
	}
	return t.virtual, nil
}

// mkdirError explains why the folders of a write could not be created.
func mkdirError(virtual, dir string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
		return &Error{Op: "write", Path: virtual, Msg: "cannot create folder " + dir + ": a file has that name", Err: err}
	}
	return fsError("write", virtual, err)
}

// isTemp reports whether name is a temporary file of an atomic write.
func isTemp(name string) bool {
	return strings.HasPrefix(name, tempPrefix) && strings.HasSuffix(name, tempSuffix)
}

// HostPath returns the host path of a virtual path under OutputDir or
// InputDir, for uploads. The file need not exist yet (downloads into
// /inputs), but an existing link leading outside the root is refused.
func (s *Sandbox) HostPath(virtual string) (string, error) {
	t, err := s.resolve("hostpath", virtual, false)
	if err != nil {
		return "", err
	}
	if t.m != &s.outputs && t.m != &s.inputs {
		return "", &Error{Op: "hostpath", Path: t.virtual, Msg: "only files under /outputs and /inputs have host paths"}
	}
	if t.m.host == "" {
		return "", &Error{Op: "hostpath", Path: t.virtual, Msg: t.m.dir + " is not available in this session"}
	}
	if _, root, err := s.access(t.m); err != nil {
		return "", fsError("hostpath", t.virtual, err)
	} else if root != nil {
		if _, err := root.Stat(t.rel); err != nil && !notFound(err) {
			return "", fsError("hostpath", t.virtual, err)
		}
	}
	return filepath.Join(t.m.host, filepath.FromSlash(t.rel)), nil
}
