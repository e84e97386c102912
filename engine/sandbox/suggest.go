package sandbox

import (
	"io/fs"
	"path"
	"slices"
	"strings"
)

// maxNearby caps how many names a not-found error suggests.
const maxNearby = 8

// maxCompared caps the name length compared by edit distance; longer names
// are matched by prefix and substring only.
const maxCompared = 64

// nearbyText is what a not-found error adds about the existing folder dir
// of m where the name want is missing: "; /project/docs is empty",
// "; nearby: " and the virtual paths of names like want, or "" when the
// folder cannot be listed.
func (s *Sandbox) nearbyText(m *mount, dir, want string) string {
	entries, err := s.readDir(m, dir)
	if err != nil {
		return ""
	}
	if len(entries) == 0 {
		return "; " + virtualPath(m, dir) + " is empty"
	}
	near := nearby(want, entries)
	for i, n := range near {
		near[i] = virtualPath(m, path.Join(dir, n))
		if strings.HasSuffix(n, "/") {
			near[i] += "/"
		}
	}
	return "; nearby: " + strings.Join(near, ", ")
}

// nearby returns up to maxNearby names from entries (with "/" on folders)
// that look like want, best first. A folder with few entries is listed
// whole; in a larger one only similar names are kept, or the first few
// names when none is similar.
func nearby(want string, entries []fs.DirEntry) []string {
	type cand struct {
		name    string
		score   int
		similar bool
	}
	w := strings.ToLower(want)
	cands := make([]cand, 0, len(entries))
	anySimilar := false
	for _, e := range entries {
		n := strings.ToLower(e.Name())
		score, similar := similarity(w, n)
		anySimilar = anySimilar || similar
		cands = append(cands, cand{entryName(e), score, similar})
	}
	if len(cands) > maxNearby && anySimilar {
		cands = slices.DeleteFunc(cands, func(c cand) bool { return !c.similar })
	}
	if len(cands) <= maxNearby || anySimilar {
		slices.SortStableFunc(cands, func(a, b cand) int { return a.score - b.score })
	}
	cands = cands[:min(len(cands), maxNearby)]
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.name
	}
	return out
}

// similarity scores how close name is to want (lower is closer) and says
// whether it is close enough to suggest from a large folder. Both are
// lower-case.
func similarity(want, name string) (int, bool) {
	prefix := 0
	for prefix < len(want) && prefix < len(name) && want[prefix] == name[prefix] {
		prefix++
	}
	d := len(want) + len(name)
	if len(want) <= maxCompared && len(name) <= maxCompared {
		d = editDistance(want, name)
	}
	stem := func(s string) string { return strings.TrimSuffix(s, path.Ext(s)) }
	similar := d <= max(2, len(want)/3) ||
		prefix >= min(4, len(want)) ||
		(len(want) >= 3 && strings.Contains(name, want)) ||
		(len(name) >= 3 && strings.Contains(want, name)) ||
		stem(want) == stem(name)
	return d - prefix, similar
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
