package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"syscall"
	"unicode/utf8"
)

// binarySniff is how much of a file is inspected to call it binary.
const binarySniff = 8 << 10

// ReadFile reads p and returns its content and virtual path. A relative p
// missing from /project is looked for under /outputs, then /inputs. Folders,
// binary files and files over MaxRead are refused; a missing file's error
// lists nearby names.
func (s *Sandbox) ReadFile(p string) ([]byte, string, error) {
	t, fi, err := s.locate("read", p)
	if err != nil {
		return nil, "", err
	}
	if fi.IsDir() {
		return nil, "", &Error{Op: "read", Path: t.virtual, Msg: "is a folder, not a file; " + s.folderText(t)}
	}
	if !fi.Mode().IsRegular() {
		return nil, "", &Error{Op: "read", Path: t.virtual, Msg: "not a regular file"}
	}
	if fi.Size() > s.maxRead {
		return nil, "", tooLarge(t.virtual, fi.Size(), s.maxRead)
	}
	fsys, _, err := s.access(t.m)
	if err != nil {
		return nil, "", fsError("read", t.virtual, err)
	}
	f, err := fsys.Open(t.rel)
	if err != nil {
		return nil, "", fsError("read", t.virtual, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, s.maxRead+1))
	if err != nil {
		return nil, "", fsError("read", t.virtual, err)
	}
	if int64(len(data)) > s.maxRead {
		return nil, "", tooLarge(t.virtual, int64(len(data)), s.maxRead)
	}
	if isBinary(data) {
		return nil, "", &Error{Op: "read", Path: t.virtual, Msg: "binary file, not shown"}
	}
	return data, t.virtual, nil
}

// tooLarge is the refusal of a file over the read cap.
func tooLarge(virtual string, size, limit int64) error {
	return &Error{Op: "read", Path: virtual, Msg: fmt.Sprintf("file is too large to read (%s; the limit is %s)", SizeText(size), SizeText(limit))}
}

// Exists reports whether p resolves to an existing file or folder, looking
// for relative paths the way ReadFile does.
func (s *Sandbox) Exists(p string) bool {
	_, _, err := s.locate("read", p)
	return err == nil
}

// List returns the names in the virtual folder dir, sorted, with a trailing
// "/" on folders. "/" lists the available mounts; a missing /inputs is empty.
func (s *Sandbox) List(dir string) ([]string, error) {
	if d := strings.TrimSpace(dir); strings.HasPrefix(d, "/") {
		if first, _ := splitFirst(d); first == "" {
			var names []string
			for _, m := range s.mounts() {
				if m.available() {
					names = append(names, m.name+"/")
				}
			}
			return names, nil
		}
	}
	t, fi, err := s.locate("list", dir)
	if err != nil {
		if t.m == &s.inputs && t.rel == "." {
			if fsys, _, aerr := s.access(t.m); aerr == nil && fsys == nil {
				return []string{}, nil
			}
		}
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &Error{Op: "list", Path: t.virtual, Msg: "is a file, not a folder"}
	}
	entries, err := s.readDir(t.m, t.rel)
	if err != nil {
		return nil, fsError("list", t.virtual, err)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = entryName(e)
	}
	return names, nil
}

// locate resolves p for reading and stats it. A relative path is looked
// for first in the active base folder; one missing from /project falls
// back to /outputs, then /inputs. A missing file is an error listing
// nearby names.
func (s *Sandbox) locate(op, p string) (target, fs.FileInfo, error) {
	if bt, fi, ok := s.inBase(op, p); ok {
		return bt, fi, nil
	}
	t, err := s.resolve(op, p, false)
	if err != nil {
		return target{}, nil, err
	}
	// A name the policy refuses under /project still falls back, so that a
	// relative read of the session's own "deploy.env" finds /outputs.
	perr := s.allowed(op, t)
	var fi fs.FileInfo
	if perr == nil {
		if fi, err = s.stat(t); err == nil {
			return t, fi, nil
		}
	}
	if (perr != nil || notFound(err)) && t.relative {
		if alt, afi, ok := s.fallback(t); ok {
			return alt, afi, nil
		}
	}
	switch {
	case perr != nil:
		return t, nil, perr
	case notFound(err):
		return t, nil, s.missing(op, t)
	}
	return t, nil, fsError(op, t.virtual, err)
}

// inBase looks for p in the active base folder (the loaded skill's) when
// there is one and p is relative: ok when it is there and the policy lets
// it be read. Any failure leaves p to the usual lookup.
func (s *Sandbox) inBase(op, p string) (target, fs.FileInfo, bool) {
	base := s.view.Load().base
	if base == "" {
		return target{}, nil, false
	}
	q := strings.TrimSpace(p)
	if q == "" || q[0] == '/' || q[0] == '{' {
		return target{}, nil, false
	}
	bt, err := s.resolve(op, base+"/"+q, false)
	if err != nil || !s.permitted(bt) {
		return target{}, nil, false
	}
	fi, err := s.stat(bt)
	if err != nil {
		return target{}, nil, false
	}
	return bt, fi, true
}

// fallback looks for the relative read t, missing or refused under
// /project, under /outputs and then /inputs: ok with the first that is
// available, permitted and there.
func (s *Sandbox) fallback(t target) (target, fs.FileInfo, bool) {
	for _, m := range []*mount{&s.outputs, &s.inputs} {
		if !m.available() {
			continue
		}
		alt := target{m: m, rel: t.rel, virtual: virtualPath(m, t.rel), relative: true}
		if !s.permitted(alt) {
			continue
		}
		if fi, err := s.stat(alt); err == nil {
			return alt, fi, true
		}
	}
	return target{}, nil, false
}

// stat stats t through its mount's fs.FS, following links inside the root.
func (s *Sandbox) stat(t target) (fs.FileInfo, error) {
	fsys, _, err := s.access(t.m)
	if err != nil {
		return nil, err
	}
	if fsys == nil {
		return nil, fs.ErrNotExist
	}
	return fs.Stat(fsys, t.rel)
}

// readDir lists a folder of m, hiding the sandbox's temporary files.
func (s *Sandbox) readDir(m *mount, rel string) ([]fs.DirEntry, error) {
	fsys, _, err := s.access(m)
	if err != nil {
		return nil, err
	}
	if fsys == nil {
		return nil, fs.ErrNotExist
	}
	entries, err := fs.ReadDir(fsys, rel)
	if err != nil {
		return nil, err
	}
	parentReal := realOf(target{m: m, rel: rel})
	kept := entries[:0]
	for _, e := range entries {
		if isTemp(e.Name()) {
			continue
		}
		if ok, _ := s.entryShown(m, rel, parentReal, e); ok {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// notFound reports whether err means the name does not exist, including a
// file standing where a folder was expected.
func notFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// entryName is a directory entry's name, with "/" appended for folders.
func entryName(e fs.DirEntry) string {
	if e.IsDir() {
		return e.Name() + "/"
	}
	return e.Name()
}

// folderShown caps how many entries a folder message names.
const folderShown = 10

// folderText describes a folder's contents for an error message.
func (s *Sandbox) folderText(t target) string {
	entries, err := s.readDir(t.m, t.rel)
	if err != nil {
		return "its contents cannot be listed"
	}
	if len(entries) == 0 {
		return "it is empty"
	}
	var b strings.Builder
	b.WriteString("it holds: ")
	for i, e := range entries {
		if i == folderShown {
			fmt.Fprintf(&b, " (and %d more)", len(entries)-folderShown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(entryName(e))
	}
	return b.String()
}

// missing builds the not-found error of t: it finds the nearest existing
// folder above t and names the entries there that look like what was asked.
func (s *Sandbox) missing(op string, t target) error {
	e := &Error{Op: op, Path: t.virtual, Msg: "not found"}
	if fsys, _, err := s.access(t.m); err == nil && fsys == nil {
		e.Msg = "not found; " + t.m.dir + " has no files yet"
		return e
	}
	// Walk up to the nearest existing folder; want is the first missing
	// name below it.
	dir, want := path.Dir(t.rel), path.Base(t.rel)
	for {
		fi, err := s.stat(target{m: t.m, rel: dir})
		if err == nil && dir != "." && !s.permitted(target{m: t.m, rel: dir}) {
			err = fs.ErrNotExist // a hidden folder is missing
		}
		if err == nil && fi.IsDir() {
			break
		}
		if err == nil { // a file where a folder is needed
			e.Msg = "not found; " + virtualPath(t.m, dir) + " is a file, not a folder"
			return e
		}
		if dir == "." {
			return e
		}
		dir, want = path.Dir(dir), path.Base(dir)
	}
	if dir != path.Dir(t.rel) {
		e.Msg = "not found; folder " + virtualPath(t.m, path.Join(dir, want)) + " does not exist"
	}
	e.Msg += s.nearbyText(t.m, dir, want)
	return e
}

// isBinary reports whether data looks binary: a NUL byte in its first
// binarySniff bytes, or more than one invalid UTF-8 byte in eight there.
func isBinary(data []byte) bool {
	head := data[:min(len(data), binarySniff)]
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	invalid := 0
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			if len(head) < len(data) && !utf8.FullRune(head[i:]) {
				break // a rune cut by the sniff window
			}
			invalid++
		}
		i += size
	}
	return invalid*8 > len(head)
}
