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
	dir, rest := splitGlob(p)
	var starts []string
	switch {
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "{"):
		starts = []string{dir}
	default:
		if base := s.view.Load().base; base != "" {
			starts = append(starts, path.Join(base, dir))
		}
		for _, m := range []*mount{&s.project, &s.outputs, &s.inputs} {
			if m.available() {
				starts = append(starts, path.Join(m.dir, dir))
			}
		}
	}
	var lastErr error
	for _, start := range starts {
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

// walkGlob matches the pattern segments below the folder t.
func (s *Sandbox) walkGlob(t target, segs []string) ([]string, error) {
	fsys, _, err := s.access(t.m)
	if err != nil || fsys == nil {
		return []string{}, err
	}
	var out []string
	visits := 0
	var truncated bool
	reals := map[string]string{t.rel: realOf(t)} // real paths of folders walked
	err = fs.WalkDir(fsys, t.rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		visits++
		if visits > maxGlobVisits || len(out) >= MaxGlobMatches {
			truncated = true
			return fs.SkipAll
		}
		if isTemp(d.Name()) {
			return nil
		}
		if p != t.rel {
			parent := path.Dir(p)
			ok, real := s.entryShown(t.m, parent, reals[parent], d)
			if !ok {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				reals[p] = real
			}
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, t.rel), "/")
		if t.rel == "." {
			rel = p
		}
		if rel == "" || rel == "." {
			return nil
		}
		if matchSegs(segs, strings.Split(rel, "/")) {
			name := virtualPath(t.m, p)
			if d.IsDir() {
				name += "/"
			}
			out = append(out, name)
		}
		if d.IsDir() && !couldMatch(segs, strings.Split(rel, "/")) {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return out, fsError("list", t.virtual, err)
	}
	if truncated {
		return out, ErrGlobTruncated
	}
	return out, nil
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
