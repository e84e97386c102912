package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// DefaultDeny are the names no read mount shows: secrets and credentials.
// A pattern matches one path segment (path.Match, case-insensitive); one
// ending in "/" matches a folder, and everything under it.
var DefaultDeny = []string{
	".env", ".env.*", "*.env",
	".git/", ".git-credentials", ".gitconfig",
	".ssh/", ".aws/", ".azure/", ".gnupg/", ".kube/", ".docker/", ".config/gcloud/",
	".netrc", ".npmrc", ".pypirc", ".pgpass", ".htpasswd",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	"credentials", "credentials.json", "service-account*.json",
	"secrets.yaml", "secrets.yml", "secrets.json", "secrets.toml", "secrets.env", "*.secret", "*.secrets",
}

// policy is what reads under /project, /core, /skills and /inputs may not
// reach: hidden host folders (agentbot's own data) and denied names.
type policy struct {
	hidden []string   // real host paths that no read mount shows
	deny   [][]string // patterns, split on "/", lower case
}

// newPolicy builds the policy of a sandbox. A hidden folder that holds a
// mount's root (the project inside the data folder) hides its other
// entries instead, so the mount itself stays readable.
func newPolicy(hidden, deny []string, roots []string) policy {
	var p policy
	for _, h := range hidden {
		if h == "" {
			continue
		}
		hr := realOrClean(h)
		inside := ""
		for _, r := range roots {
			if r != "" && within(hr, r) {
				inside = r
				break
			}
		}
		if inside == "" {
			p.hidden = append(p.hidden, hr)
			continue
		}
		entries, _ := os.ReadDir(hr)
		for _, e := range entries {
			c := filepath.Join(hr, e.Name())
			if !within(inside, c) {
				p.hidden = append(p.hidden, c)
			}
		}
	}
	for _, d := range append(append([]string(nil), DefaultDeny...), deny...) {
		d = strings.ToLower(strings.TrimSpace(d))
		if d != "" {
			p.deny = append(p.deny, strings.Split(strings.TrimPrefix(d, "/"), "/"))
		}
	}
	return p
}

// denied reports whether a mount-relative path (slash form) has a denied
// name: a segment that matches a pattern, or consecutive segments that
// match a pattern of several ("a/b/"). A folder pattern matches the folder
// and everything under it, as any segment match does.
func (p policy) denied(rel string) bool {
	if rel == "." || rel == "" {
		return false
	}
	segs := strings.Split(strings.ToLower(rel), "/")
	for _, pat := range p.deny {
		if pat[len(pat)-1] == "" {
			pat = pat[:len(pat)-1]
		}
		for i := 0; i+len(pat) <= len(segs); i++ {
			ok := true
			for j, pj := range pat {
				if m, _ := path.Match(pj, segs[i+j]); !m {
					ok = false
					break
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// hides reports whether a host path is, or lies in, a hidden folder,
// symlinks resolved.
func (p policy) hides(host string) bool {
	if len(p.hidden) == 0 {
		return false
	}
	real := realOrClean(host)
	for _, h := range p.hidden {
		if within(h, real) || within(h, filepath.Clean(host)) {
			return true
		}
	}
	return false
}

// realOrClean is path with symlinks resolved, or cleaned when it does not
// exist (its existing parent resolved).
func realOrClean(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = filepath.Clean(p)
	}
	if r := realPath(abs); r != "" {
		return r
	}
	return abs
}

// within reports whether p is root or lies below it.
func within(root, p string) bool {
	_, ok := hostRel(root, p)
	return ok
}

// msgDenied is the refusal of a denied name.
const msgDenied = "denied by policy (secrets and credentials are not readable)"

// screened reports whether the policy screens mount m: every read mount
// but the session's own /outputs; hidden folders are not looked for in
// /inputs, which lives in the data folder.
func (s *Sandbox) screened(m *mount) (deny, hide bool) {
	switch m {
	case &s.outputs:
		return false, false
	case &s.inputs:
		return true, false
	}
	return true, true
}

// allowed checks t against the policy: a denied name is refused, and a
// path in a hidden folder is reported as missing, as if it did not exist.
func (s *Sandbox) allowed(op string, t target) error {
	deny, hide := s.screened(t.m)
	if deny && s.policy.denied(t.rel) {
		return &Error{Op: op, Path: t.virtual, Msg: msgDenied}
	}
	if hide && t.m.host != "" && s.policy.hides(filepath.Join(t.m.host, filepath.FromSlash(t.rel))) {
		return &Error{Op: op, Path: t.virtual, Msg: "not found"}
	}
	return nil
}

// visible reports whether the entry name of folder rel in m may be shown
// in listings and suggestions.
func (s *Sandbox) visible(m *mount, rel, name string) bool {
	child := name
	if rel != "." && rel != "" {
		child = rel + "/" + name
	}
	return s.allowed("list", target{m: m, rel: child}) == nil
}

// Virtual returns the virtual path of an absolute host path inside a read
// mount ("/home/ana/proj/docs" → "/project/docs"), or false when the model
// could not read it there.
func (s *Sandbox) Virtual(host string) (string, bool) {
	if !filepath.IsAbs(host) {
		return "", false
	}
	t, err := s.resolveHost("resolve", filepath.Clean(host), false)
	if err != nil || t.m == &s.outputs || t.m == &s.inputs || s.allowed("resolve", t) != nil {
		return "", false
	}
	return t.virtual, true
}
