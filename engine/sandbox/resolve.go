package sandbox

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"agentbot/engine/vars"
)

// target is a resolved path: its mount, its name inside the mount in
// fs.ValidPath form ("." for the mount itself) and its virtual path.
type target struct {
	m        *mount
	rel      string
	virtual  string
	relative bool // the input was a relative path (reads may fall back)
}

// Resolve returns the clean virtual path for p, or an error saying what is
// allowed. Relative paths resolve under ProjectDir for reads and OutputDir
// for writes.
//
// Path variables ({project-root}, {output_folder}, ...) expand first. An
// absolute host path inside one of the roots maps to its virtual path; other
// absolute paths, NUL bytes and ".." climbing above a mount are refused, and
// writes are allowed only under OutputDir. Resolve does no I/O: links are
// checked by os.Root when the file is opened.
func (s *Sandbox) Resolve(p string, write bool) (string, error) {
	op := "read"
	if write {
		op = "write"
	}
	t, err := s.resolve(op, p, write)
	if err != nil {
		return "", err
	}
	return t.virtual, nil
}

// resolve is Resolve with the operation name used in errors.
func (s *Sandbox) resolve(op, p string, write bool) (target, error) {
	orig, p, err := s.input(op, p)
	if err != nil {
		return target{}, err
	}
	if p[0] != '/' {
		// "_bmad-output/x", relative to the project, is its artifact folder.
		if u := s.unalias(ProjectDir + "/" + p); strings.HasPrefix(u, OutputDir) {
			p = u
		}
	}
	var t target
	if p[0] == '/' {
		p = s.unalias(p)
		first, rest := splitFirst(p)
		m := s.mountNamed(first)
		if m == nil {
			return s.resolveHost(op, p, write)
		}
		t = target{m: m, rel: rest}
	} else {
		t = target{m: &s.project, rel: p, relative: true}
		if write {
			t.m = &s.outputs
		}
	}
	rel, ok := cleanRel(t.rel)
	if !ok {
		return target{}, escapeError(op, shown(orig), t.m)
	}
	t.rel = rel
	t.virtual = virtualPath(t.m, t.rel)
	return t, s.check(op, t, write)
}

// input checks the path as given (its length, no NUL byte, not blank) and
// expands its variables. It returns the path trimmed, for errors, and the
// expanded path to resolve, which is not empty.
func (s *Sandbox) input(op, p string) (orig, expanded string, err error) {
	if len(p) > maxPathLen {
		return "", "", &Error{Op: op, Msg: fmt.Sprintf("path is too long (%d bytes; the limit is %d)", len(p), maxPathLen)}
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", "", &Error{Op: op, Msg: msgNUL}
	}
	p = strings.TrimSpace(p)
	if p == "" {
		return "", "", &Error{Op: op, Msg: msgEmpty}
	}
	if strings.IndexByte(p, '{') < 0 {
		return p, p, nil
	}
	x, err := s.expandVars(op, p)
	return p, x, err
}

// expandVars expands the path variables of p with the current view's; the
// result must again be a valid, non-empty path.
func (s *Sandbox) expandVars(op, p string) (string, error) {
	x, err := vars.Expand(p, s.view.Load().vars)
	if err != nil {
		return "", &Error{Op: op, Path: shown(p), Msg: err.Error(), Err: err}
	}
	if len(x) > maxPathLen || strings.IndexByte(x, 0) >= 0 {
		return "", &Error{Op: op, Path: shown(p), Msg: "path variables expand to an invalid path"}
	}
	x = strings.TrimSpace(x)
	if x == "" {
		return "", &Error{Op: op, Msg: msgEmpty}
	}
	return x, nil
}

// unalias rewrites a path under an output alias ("/project/_bmad-output/x")
// to the same path under its folder in /outputs. Only a clean prefix
// counts; ".." in the rest is judged against /outputs afterwards.
func (s *Sandbox) unalias(p string) string {
	for _, a := range s.aliases {
		if rest, ok := strings.CutPrefix(p, a.From); ok && (rest == "" || rest[0] == '/') {
			return a.To + rest
		}
	}
	return p
}

// resolveHost maps an absolute host path inside one of the roots to its
// virtual path; anything else is refused. The longest matching root wins.
func (s *Sandbox) resolveHost(op, p string, write bool) (target, error) {
	hp := filepath.Clean(p)
	var best target
	bestLen := -1
	for _, m := range s.mounts() {
		for _, h := range [2]string{m.host, m.real} {
			rel, ok := hostRel(h, hp)
			if ok && len(h) > bestLen {
				best, bestLen = target{m: m, rel: rel}, len(h)
			}
		}
	}
	if best.m == nil {
		msg := msgOutside
		if write {
			msg = msgOutsideWrite
		}
		return target{}, &Error{Op: op, Msg: msg}
	}
	best.virtual = virtualPath(best.m, best.rel)
	return best, s.check(op, best, write)
}

// check applies the rules that depend on the mount: it must be available,
// and writes go only to a file under /outputs.
func (s *Sandbox) check(op string, t target, write bool) error {
	if write && t.m != &s.outputs {
		return &Error{Op: op, Path: t.virtual, Msg: t.m.dir + " is read-only; writes go to /outputs (a relative path lands there)"}
	}
	if !t.m.available() {
		return &Error{Op: op, Path: t.virtual, Msg: t.m.dir + " is not available in this session; use " + s.availableText()}
	}
	if write && t.rel == "." {
		return &Error{Op: op, Path: t.virtual, Msg: "needs a file name under /outputs, such as /outputs/notes.md"}
	}
	return nil
}

// availableText lists the available mounts, e.g. "/project, /core or /outputs".
func (s *Sandbox) availableText() string {
	var names []string
	for _, m := range s.mounts() {
		if m.available() {
			names = append(names, m.dir)
		}
	}
	switch len(names) {
	case 0:
		return "nothing (no folders are configured)"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// escapeError is the refusal of ".." climbing above a mount.
func escapeError(op, shownPath string, m *mount) error {
	return &Error{Op: op, Path: shownPath, Msg: "path escapes " + m.dir + "; \"..\" may not climb above it"}
}

// shown returns p for display in an error when it cannot be a host path
// (it is relative, or starts with a variable), and "" otherwise.
func shown(p string) string {
	if strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}

// splitFirst splits an absolute path into its first real segment and the
// rest, skipping empty and "." segments: "//./project/a" -> "project", "a".
func splitFirst(p string) (first, rest string) {
	for {
		p = strings.TrimLeft(p, "/")
		if p == "." {
			return "", ""
		}
		if !strings.HasPrefix(p, "./") {
			break
		}
		p = p[1:]
	}
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}

// cleanRel cleans a path relative to a mount. It reports false when ".."
// would climb above the mount at any point.
func cleanRel(p string) (string, bool) {
	depth := 0
	for s := p; s != ""; {
		seg := s
		if i := strings.IndexByte(s, '/'); i >= 0 {
			seg, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		switch seg {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return "", false
			}
		default:
			depth++
		}
	}
	c := path.Clean(strings.TrimLeft(p, "/"))
	if c == "" {
		c = "."
	}
	return c, true
}

// hostRel returns hp relative to host root h, slash-separated, when hp is h
// or lies below it.
func hostRel(h, hp string) (string, bool) {
	switch {
	case h == "":
		return "", false
	case hp == h:
		return ".", true
	case h == string(filepath.Separator):
		return filepath.ToSlash(hp[1:]), true
	case len(hp) > len(h) && hp[len(h)] == filepath.Separator && strings.HasPrefix(hp, h):
		return filepath.ToSlash(hp[len(h)+1:]), true
	}
	return "", false
}

// virtualPath joins a mount and a clean relative name.
func virtualPath(m *mount, rel string) string {
	if rel == "." {
		return m.dir
	}
	return m.dir + "/" + rel
}
