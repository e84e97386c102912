package sandbox

import (
	"path/filepath"
)

// CopyScreen tells which files of a host folder may be copied to a place
// the model reads, such as a project's documents (its base layers): those
// a read mount of the folder would show. It is the sandbox's own policy,
// not a second one: names DefaultDeny and the configuration's patterns
// refuse, and the hidden folders (Config.Hidden, agentbot's data folder)
// by path and by identity, with hiddenFor's rule for a folder that lies
// inside one.
type CopyScreen struct {
	p policy
	m mount
}

// NewCopyScreen builds the screen of the host folder root, with hidden
// and deny as in Config.Hidden and Config.Deny; a malformed pattern is an
// error.
func NewCopyScreen(root string, hidden, deny []string) (CopyScreen, error) {
	p, err := newPolicy(hidden, deny)
	if err != nil {
		return CopyScreen{}, err
	}
	m := mount{real: realOrClean(root)}
	m.host = m.real
	m.hide = hiddenFor(p.hidden, m.real)
	return CopyScreen{p: p, m: m}, nil
}

// ShownEntry reports whether rel (slash form, relative to the root; "."
// the root), an entry whose folders were shown already, may be shown: its
// name is not denied and it is no hidden folder and lies in none, a
// folder judged by path and identity, a file by path. It resolves no link:
// callers walk down from the root without following them.
func (c CopyScreen) ShownEntry(rel string, isDir bool) bool {
	if c.p.deny.deniedLast(rel) {
		return false
	}
	real := c.real(rel)
	return !c.m.hidesByPath(real) && !(isDir && isHiddenDir(real, c.m.hide))
}

// real is the host path of rel under the root.
func (c CopyScreen) real(rel string) string {
	return filepath.Join(c.m.real, filepath.FromSlash(rel))
}
