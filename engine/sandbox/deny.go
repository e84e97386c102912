package sandbox

import (
	"fmt"
	"path"
	"strings"
)

// DefaultDeny are the names no read mount but /outputs shows: secrets and
// credentials. A pattern matches one path segment (path.Match,
// case-insensitive), or consecutive segments when it holds a "/"; one
// ending in "/" names a folder. A match hides everything under it too.
var DefaultDeny = []string{
	".env", ".env.*", "*.env", ".envrc",
	".git/", ".git-credentials", ".gitconfig",
	".ssh/", ".aws/", ".azure/", ".gnupg/", ".kube/", ".docker/", ".config/gcloud/",
	".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".htpasswd",
	".vault-token", ".s3cfg", ".boto", ".terraformrc", "*.tfstate", "*.tfstate.*",
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.kdbx", "*.ppk",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	"credentials", "credentials.json", "service-account*.json", "application_default_credentials.json",
	// secrets.* but for documents: "secrets.md" may well be a design note.
	"secrets.yaml", "secrets.yml", "secrets.json", "secrets.toml", "secrets.ini", "secrets.env",
	"secrets.txt", "secrets.properties", "secrets.*.yaml", "secrets.*.yml", "secrets.*.json",
	"*.secret", "*.secrets",
}

// denyList is a compiled list of deny patterns.
type denyList struct {
	names map[string]bool // one-segment patterns without wildcards
	pats  [][]segPattern  // the others, split on "/"
}

// segPattern matches one path segment, lower case.
type segPattern struct {
	kind byte // '=' literal, '<' prefix + "*", '>' "*" + suffix, '?' path.Match
	s    string
}

// newDenyList compiles patterns: trimmed, lower case, a leading or
// trailing "/" dropped, empty ones skipped. A malformed pattern is an
// error rather than a gap in the list.
func newDenyList(patterns []string) (denyList, error) {
	d := denyList{names: map[string]bool{}}
	for _, raw := range patterns {
		p := strings.Trim(strings.ToLower(strings.TrimSpace(raw)), "/")
		if p == "" {
			continue
		}
		var pat []segPattern
		for _, seg := range strings.Split(p, "/") {
			if _, err := path.Match(seg, ""); err != nil || seg == "" {
				return denyList{}, fmt.Errorf("deny pattern %q is malformed", raw)
			}
			pat = append(pat, compileSeg(seg))
		}
		if len(pat) == 1 && pat[0].kind == '=' {
			d.names[pat[0].s] = true
		} else {
			d.pats = append(d.pats, pat)
		}
	}
	return d, nil
}

// compileSeg picks the cheapest way to match one segment pattern.
func compileSeg(seg string) segPattern {
	meta := strings.IndexAny(seg, "*?[\\")
	switch {
	case meta < 0:
		return segPattern{'=', seg}
	case meta == len(seg)-1 && seg[meta] == '*':
		return segPattern{'<', seg[:meta]}
	case meta == 0 && seg[0] == '*' && !strings.ContainsAny(seg[1:], "*?[\\"):
		return segPattern{'>', seg[1:]}
	}
	return segPattern{'?', seg}
}

// match reports whether the lower-case segment s matches p.
func (p segPattern) match(s string) bool {
	switch p.kind {
	case '=':
		return s == p.s
	case '<':
		return strings.HasPrefix(s, p.s)
	case '>':
		return strings.HasSuffix(s, p.s)
	}
	ok, _ := path.Match(p.s, s)
	return ok
}

// denied reports whether a mount-relative path (slash form) has a denied
// name: a segment that matches a pattern, or consecutive segments that
// match a pattern of several ("a/b/").
func (d denyList) denied(rel string) bool {
	if rel == "." || rel == "" {
		return false
	}
	segs := strings.Split(strings.ToLower(rel), "/")
	for i := range segs {
		if d.deniedAt(segs[:i+1]) {
			return true
		}
	}
	return false
}

// deniedLast reports whether a pattern matches rel ending at its last
// segment: enough for a name whose folder is known not to be denied.
func (d denyList) deniedLast(rel string) bool {
	return d.deniedAt(strings.Split(strings.ToLower(rel), "/"))
}

// deniedAt reports whether a pattern matches segs ending at its last one.
func (d denyList) deniedAt(segs []string) bool {
	if d.names[segs[len(segs)-1]] {
		return true
	}
	for _, pat := range d.pats {
		if len(pat) > len(segs) {
			continue
		}
		tail := segs[len(segs)-len(pat):]
		ok := true
		for j, p := range pat {
			if !p.match(tail[j]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
