package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// Virtual returns what the model is shown for an absolute path p, such as a
// config value:
//   - its virtual path when p, or the real path it leads to, lies in
//     /project, /core or /skills and the policy lets the model read it
//     ("/home/ana/proj/docs" → "/project/docs"; under an output alias,
//     the /outputs path it stands for);
//   - p itself when p is no host path: its first folder does not exist
//     here and is not a usual host folder (/home, /Users, /tmp, ...), as
//     with "/api/v1";
//   - false otherwise (a host path elsewhere, in the data folder, in this
//     session's own folders or denied), which the caller must not show.
func (s *Sandbox) Virtual(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	clean := filepath.Clean(p)
	for _, hp := range [2]string{clean, realOrClean(clean)} {
		t, err := s.resolveHost("resolve", hp, false)
		if err != nil {
			continue
		}
		if t.m == &s.outputs || t.m == &s.inputs || !s.permitted(t) {
			return "", false
		}
		return s.unalias(t.virtual), true
	}
	if !isHostPath(clean) {
		return p, true
	}
	return "", false
}

// hostRoots are top folders that name a host path even on another machine.
var hostRoots = map[string]bool{
	"home": true, "users": true, "root": true, "tmp": true, "var": true, "private": true,
	"opt": true, "srv": true, "mnt": true, "media": true, "etc": true, "usr": true,
	"volumes": true, "data": true, "workspace": true, "workspaces": true, "run": true,
}

// isHostPath reports whether the clean absolute path p names a place on a
// host: its first folder exists here or is a usual host folder, or it lies
// in the user's home or the temporary folder.
func isHostPath(p string) bool {
	first, _, _ := strings.Cut(strings.TrimPrefix(filepath.ToSlash(p), "/"), "/")
	if first == "" || hostRoots[strings.ToLower(first)] {
		return true
	}
	if _, err := os.Lstat(string(filepath.Separator) + first); err == nil {
		return true
	}
	for _, d := range []string{os.Getenv("HOME"), os.TempDir()} {
		if d != "" && filepath.IsAbs(d) && within(filepath.Clean(d), p) {
			return true
		}
	}
	return false
}
