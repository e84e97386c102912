package sandbox

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// Limits of Glob.
const (
	// MaxGlobMatches caps the names one Glob returns.
	MaxGlobMatches = 500
	// maxGlobVisits caps the entries one Glob looks at.
	maxGlobVisits = 20000
)

// ErrGlobTruncated is returned with the matches when a Glob found more than
// MaxGlobMatches names or looked at too many entries.
var ErrGlobTruncated = errors.New("too many matches; narrow the pattern")

// Glob returns the virtual paths of the files and folders matching pattern,
// sorted, with a trailing "/" on folders. The pattern is a path as ReadFile
// takes it (variables expand; a relative pattern is tried under the active
// base, then /project, /outputs and /inputs) whose segments may hold the
// wildcards of path.Match, and "**" for any number of folders. At most
// MaxGlobMatches names are returned, with ErrGlobTruncated when more match.
func (s *Sandbox) Glob(pattern string) ([]string, error) {
	p := strings.TrimSpace(pattern)
	if p == "" {
		return nil, &Error{Op: "list", Msg: msgEmpty}
	}
	if !hasMeta(p) {
		return s.globLiteral(p)
	}
	dir, rest := splitGlob(p)
	var lastErr error
	for _, start := range s.globStarts(p, dir) {
		if start == "" {
			start = "."
		}
		t, fi, err := s.locate("list", start)
		if err != nil {
			lastErr = err
			continue
		}
		if !fi.IsDir() {
			continue
		}
		out, err := s.walkGlob(t, strings.Split(rest, "/"))
		if len(out) > 0 || err != nil {
			return out, err
		}
	}
	if lastErr != nil && !notFoundErr(lastErr) {
		return nil, lastErr
	}
	return []string{}, nil
}

// globLiteral is Glob of a pattern without wildcards: the one name it
// locates, or none when it is missing.
func (s *Sandbox) globLiteral(p string) ([]string, error) {
	t, fi, err := s.locate("list", p)
	if err != nil {
		if notFoundErr(err) {
			return []string{}, nil
		}
		return nil, err
	}
	name := t.virtual
	if fi.IsDir() {
		name += "/"
	}
	return []string{name}, nil
}

// globStarts returns the folders a Glob of pattern p walks, in order, for
// dir, the part of p before its first wildcard: dir itself when p is
// absolute or starts with a variable; otherwise dir under the active base,
// then under /project, /outputs and /inputs, as a relative read looks.
func (s *Sandbox) globStarts(p, dir string) []string {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "{") {
		return []string{dir}
	}
	var starts []string
	if base := s.view.Load().base; base != "" {
		starts = append(starts, path.Join(base, dir))
	}
	for _, m := range []*mount{&s.project, &s.outputs, &s.inputs} {
		if m.available() {
			starts = append(starts, path.Join(m.dir, dir))
		}
	}
	return starts
}

// walkGlob matches the pattern segments below the folder t.
func (s *Sandbox) walkGlob(t target, segs []string) ([]string, error) {
	fsys, _, err := s.access(t.m)
	if err != nil || fsys == nil {
		return []string{}, err
	}
	w := &globWalk{s: s, t: t, segs: segs, reals: map[string]string{t.rel: realOf(t)}}
	if err := fs.WalkDir(fsys, t.rel, w.visit); err != nil {
		return w.out, fsError("list", t.virtual, err)
	}
	if w.truncated {
		return w.out, ErrGlobTruncated
	}
	return w.out, nil
}

// globWalk is one walk of walkGlob: the folder it starts in, the pattern
// segments, what matched so far and how much it looked at.
type globWalk struct {
	s         *Sandbox
	t         target   // the folder walked
	segs      []string // pattern segments, relative to t
	out       []string // virtual paths matched, "/" on folders
	visits    int
	truncated bool              // a limit stopped the walk
	reals     map[string]string // real paths of folders walked
}

// visit is the fs.WalkDirFunc of the walk: it stops at a limit, skips
// temporary files and entries the policy does not show, records a match
// and goes into a folder only when some match could lie below it.
func (w *globWalk) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return nil
	}
	w.visits++
	if w.visits > maxGlobVisits || len(w.out) >= MaxGlobMatches {
		w.truncated = true
		return fs.SkipAll
	}
	if isTemp(d.Name()) {
		return nil
	}
	if p != w.t.rel && !w.shown(p, d) {
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	rel := walkRel(w.t.rel, p)
	if rel == "" || rel == "." {
		return nil
	}
	names := strings.Split(rel, "/")
	if matchSegs(w.segs, names) {
		name := virtualPath(w.t.m, p)
		if d.IsDir() {
			name += "/"
		}
		w.out = append(w.out, name)
	}
	if d.IsDir() && !couldMatch(w.segs, names) {
		return fs.SkipDir
	}
	return nil
}

// shown reports whether the policy shows the entry d at p, below the
// walk's folder, judged against its parent's real path; for a folder it
// shows, it records the folder's real path for the entries inside.
func (w *globWalk) shown(p string, d fs.DirEntry) bool {
	parent := path.Dir(p)
	ok, real := w.s.entryShown(w.t.m, parent, w.reals[parent], d)
	if ok && d.IsDir() {
		w.reals[p] = real
	}
	return ok
}

// walkRel returns p, a path fs.WalkDir visits below root (both in
// fs.ValidPath form), relative to root: "" or "." for root itself.
func walkRel(root, p string) string {
	if root == "." {
		return p
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
}

// matchSegs matches name segments against pattern segments; "**" matches
// any number of segments.
func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// couldMatch reports whether a folder's segments are a prefix some match
// could extend, so the walk goes into it.
func couldMatch(pat, dir []string) bool {
	for i, seg := range dir {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[i], seg); !ok {
			return false
		}
	}
	return true
}

// splitGlob splits a pattern at its first segment with a wildcard: the
// folder before it and the pattern from there.
func splitGlob(p string) (dir, rest string) {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if hasMeta(seg) {
			return strings.Join(segs[:i], "/"), strings.Join(segs[i:], "/")
		}
	}
	return p, ""
}

// hasMeta reports whether s holds a wildcard of path.Match.
func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// notFoundErr reports whether a sandbox error means the name is missing.
func notFoundErr(err error) bool {
	var e *Error
	return errors.As(err, &e) && strings.HasPrefix(e.Msg, "not found")
}
