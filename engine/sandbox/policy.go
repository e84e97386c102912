package sandbox

import (
	"io/fs"
	"path/filepath"
)

// policy is what reads under /project, /core, /skills and /inputs may not
// reach: hidden host folders (agentbot's own data) and denied names.
type policy struct {
	hidden []hiddenDir
	deny   denyList
}

// newPolicy builds the policy of hidden host folders and extra deny
// patterns; DefaultDeny always applies.
func newPolicy(hidden, deny []string) (policy, error) {
	d, err := newDenyList(append(append([]string(nil), DefaultDeny...), deny...))
	if err != nil {
		return policy{}, err
	}
	return policy{hidden: newHidden(hidden), deny: d}, nil
}

// msgDenied is the refusal of a denied name.
const msgDenied = "denied by policy (secrets and credentials are not readable)"

// screened reports what the policy screens in mount m: every read mount
// but the session's own /outputs is subject to the deny list; hidden
// folders are looked for in /project, /core and /skills, not in /inputs,
// which is the session's own folder in the data folder.
func (s *Sandbox) screened(m *mount) (deny, hide bool) {
	switch m {
	case &s.outputs:
		return false, false
	case &s.inputs:
		return true, false
	}
	return true, true
}

// screen applies the policy to t: whether its name is denied, by the path
// asked for or the real path a link leads to, and whether it lies in a
// hidden folder.
func (s *Sandbox) screen(t target) (denied, hidden bool) {
	if deny, _ := s.screened(t.m); !deny {
		return false, false
	}
	if s.policy.deny.denied(t.rel) {
		return true, false
	}
	if t.m.host == "" {
		return false, false
	}
	return s.screenReal(t.m, realOf(t))
}

// screenReal judges real, the real path of a name in m that is not denied
// itself.
func (s *Sandbox) screenReal(m *mount, real string) (denied, hidden bool) {
	if rel, ok := hostRel(m.realRoot(), real); ok && s.policy.deny.denied(rel) {
		return true, false // a link with an innocent name to a denied one
	}
	_, hide := s.screened(m)
	return false, hide && m.hides(real)
}

// entryShown reports whether the entry d of folder dir in m may be shown,
// and returns the entry's real path. dir was screened already and
// parentReal is its real path ("" when unknown), so an entry that is no
// link needs only itself judged; a link is screened in full.
func (s *Sandbox) entryShown(m *mount, dir, parentReal string, d fs.DirEntry) (bool, string) {
	rel := d.Name()
	if dir != "." && dir != "" {
		rel = dir + "/" + rel
	}
	if deny, _ := s.screened(m); !deny {
		return true, ""
	}
	if s.policy.deny.deniedLast(rel) {
		return false, ""
	}
	if m.host == "" {
		return true, ""
	}
	if parentReal == "" || d.Type()&fs.ModeSymlink != 0 {
		real := realOrClean(filepath.Join(m.host, filepath.FromSlash(rel)))
		denied, hidden := s.screenReal(m, real)
		return !denied && !hidden, real
	}
	real := filepath.Join(parentReal, d.Name())
	return s.plainShown(m, rel, real, d.IsDir()), real
}

// plainShown judges an entry of m that is no link, at rel and the real
// path real, in a folder the policy shows: it is refused when its real
// path has a denied name (a folder above it is a link), lies in a hidden
// folder by path, or, being a folder, is a hidden one by identity.
func (s *Sandbox) plainShown(m *mount, rel, real string, isDir bool) bool {
	if r, ok := hostRel(m.realRoot(), real); ok && r != rel && s.policy.deny.denied(r) {
		return false
	}
	if _, hide := s.screened(m); !hide {
		return true
	}
	return !m.hidesByPath(real) && !(isDir && isHiddenDir(real, m.hide))
}

// realOf returns the real host path of t, or "" when its mount has no
// host folder.
func realOf(t target) string {
	if t.m.host == "" {
		return ""
	}
	return realOrClean(filepath.Join(t.m.host, filepath.FromSlash(t.rel)))
}

// permitted reports whether the policy lets t be read or shown.
func (s *Sandbox) permitted(t target) bool {
	denied, hidden := s.screen(t)
	return !denied && !hidden
}

// allowed checks t against the policy: a denied name is refused as such,
// and a path in a hidden folder gets the error of a missing one, nearby
// names and all, so nothing tells it apart.
func (s *Sandbox) allowed(op string, t target) error {
	switch denied, hidden := s.screen(t); {
	case denied:
		return &Error{Op: op, Path: t.virtual, Msg: msgDenied}
	case hidden:
		return s.missing(op, t)
	}
	return nil
}
