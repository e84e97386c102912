package vars

import (
	"fmt"
	"strings"
)

// scope says which definitions a value's {names} resolve against.
type scope uint8

const (
	scopeBase     scope = iota // Vars given to Expand, or a workflow's base
	scopeConfig                // the file a workflow's config_source names
	scopeWorkflow              // a workflow's own keys
	scopeLiteral               // a value that is never expanded
)

// ref names one definition: a name in a scope.
type ref struct {
	sc   scope
	name string
}

// memoEntry is a definition's expanded value and the unknown names in it.
type memoEntry struct {
	key     ref
	val     string
	unknown []string
}

// memoSlice is how many memo entries are searched linearly before a map
// takes over.
const memoSlice = 8

// resolver expands values. One resolver serves one call of Expand,
// ExpandPartial or ResolveWorkflow: it memoizes each definition's expansion,
// so shared references cost linear time, and it tracks the chain of
// definitions being expanded to find cycles.
type resolver struct {
	base Vars
	wf   *workflowDefs // nil outside ResolveWorkflow
	// lenient leaves a placeholder where a cycle or a limit stops
	// expansion (ExpandPartial), instead of failing.
	lenient bool

	memo    []memoEntry
	memoMap map[ref]memoEntry
	stack   []ref
	// substituted counts the bytes substituted for variables so far.
	substituted int

	cfg configState
}

// names is an ordered set of variable names.
type names struct {
	list []string
	set  map[string]struct{}
}

func (n *names) add(s string) {
	if n.set != nil {
		if _, ok := n.set[s]; ok {
			return
		}
		n.set[s] = struct{}{}
	} else {
		for _, x := range n.list {
			if x == s {
				return
			}
		}
		if len(n.list) >= 16 {
			n.set = make(map[string]struct{}, 2*len(n.list))
			for _, x := range n.list {
				n.set[x] = struct{}{}
			}
			n.set[s] = struct{}{}
		}
	}
	n.list = append(n.list, s)
}

func (n *names) addAll(l []string) {
	for _, s := range l {
		n.add(s)
	}
}

// lookup finds the raw definition of name as seen from scope sc, and the
// scope its value expands in.
//
// Base scope sees only base. Config and workflow scopes see, in order: a
// pinned base variable (see IsPinned); the config file's keys (config
// scope) or the workflow's own keys (workflow scope); the rest of base.
func (r *resolver) lookup(sc scope, name string) (string, scope, bool) {
	if sc != scopeBase {
		if IsPinned(name) {
			if v, ok := r.base[name]; ok {
				return v, scopeBase, true
			}
		}
		switch sc {
		case scopeConfig:
			if v, ok := r.cfg.vars[name]; ok {
				return v, scopeConfig, true
			}
		case scopeWorkflow:
			if d, ok := r.wf.defs[name]; ok {
				switch {
				case d.systemGenerated:
					if v, ok := r.base[name]; ok {
						return v, scopeBase, true
					}
					if v, ok := systemValue(name, r.base); ok {
						return v, scopeLiteral, true
					}
					return "", scopeLiteral, false
				case d.literal:
					return d.raw, scopeLiteral, true
				default:
					return d.raw, scopeWorkflow, true
				}
			}
		}
	}
	v, ok := r.base[name]
	return v, scopeBase, ok
}

// systemValue derives a "system-generated" value that base lacks:
// current_year and current_month from an ISO date (YYYY-MM-DD) in base.
func systemValue(name string, base Vars) (string, bool) {
	d := base["date"]
	iso := len(d) >= 7 && d[4] == '-' && isDigits(d[:4]) && isDigits(d[5:7])
	switch {
	case name == "current_year" && iso:
		return d[:4], true
	case name == "current_month" && iso:
		return d[5:7], true
	}
	return "", false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func (r *resolver) memoGet(k ref) (memoEntry, bool) {
	if r.memoMap != nil {
		e, ok := r.memoMap[k]
		return e, ok
	}
	for _, e := range r.memo {
		if e.key == k {
			return e, true
		}
	}
	return memoEntry{}, false
}

func (r *resolver) memoPut(e memoEntry) {
	if r.memoMap == nil && len(r.memo) < memoSlice {
		r.memo = append(r.memo, e)
		return
	}
	if r.memoMap == nil {
		r.memoMap = make(map[ref]memoEntry, 2*memoSlice)
		for _, old := range r.memo {
			r.memoMap[old.key] = old
		}
	}
	r.memoMap[e.key] = e
}

// resolveName returns the expanded value of name seen from scope sc. ok is
// false when name has no value (or, when lenient, when a cycle or a limit
// stopped it): the caller keeps the placeholder and records the name.
// Unknown names inside the value are added to unk.
func (r *resolver) resolveName(sc scope, name string, unk *names) (val string, ok bool, err error) {
	raw, vsc, ok := r.lookup(sc, name)
	if !ok {
		return "", false, nil
	}
	if vsc == scopeLiteral || strings.IndexByte(raw, '{') < 0 {
		return raw, true, nil
	}
	key := ref{vsc, name}
	if e, ok := r.memoGet(key); ok {
		unk.addAll(e.unknown)
		return e.val, true, nil
	}
	for i, k := range r.stack {
		if k == key {
			if r.lenient {
				return "", false, nil
			}
			cycle := make([]string, 0, len(r.stack)-i+1)
			for _, s := range r.stack[i:] {
				cycle = append(cycle, s.name)
			}
			return "", false, &CycleError{Cycle: append(cycle, name)}
		}
	}
	if len(r.stack) >= MaxDepth {
		if r.lenient {
			return "", false, nil
		}
		chain := make([]string, 0, len(r.stack)+1)
		for _, s := range r.stack {
			chain = append(chain, "{"+s.name+"}")
		}
		return "", false, fmt.Errorf("%w (over %d levels): %s -> {%s}", ErrTooDeep, MaxDepth, strings.Join(chain, " -> "), name)
	}
	r.stack = append(r.stack, key)
	var local names
	val, err = r.expandValue(raw, vsc, &local)
	r.stack = r.stack[:len(r.stack)-1]
	if err != nil {
		return "", false, err
	}
	r.memoPut(memoEntry{key: key, val: val, unknown: local.list})
	unk.addAll(local.list)
	return val, true, nil
}

// expandValue expands a whole value: a fallback chain "A || B" resolves to
// the first alternative that expands without unknown names to something
// other than blanks; the last alternative is used as is, unknowns and all.
func (r *resolver) expandValue(s string, sc scope, unk *names) (string, error) {
	alts := splitFallback(s)
	if alts == nil {
		return r.expandText(s, sc, unk)
	}
	for _, a := range alts[:len(alts)-1] {
		var local names
		v, err := r.expandText(a, sc, &local)
		if err != nil {
			return "", err
		}
		if len(local.list) == 0 && strings.TrimSpace(v) != "" {
			return v, nil
		}
	}
	return r.expandText(alts[len(alts)-1], sc, unk)
}

// expandText replaces the {names} of s, keeping {{double}} placeholders and
// unknown names as they are (recorded in unk).
func (r *resolver) expandText(s string, sc scope, unk *names) (string, error) {
	first := strings.IndexByte(s, '{')
	if first < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s) + 64)
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		kind, end := token(s, i)
		if kind != tokVar {
			b.WriteString(s[i:end])
			i = end
			continue
		}
		name := s[i+1 : end-1]
		placeholder := s[i:end]
		var (
			val string
			ok  bool
			err error
		)
		if sc == scopeWorkflow && name == "config_source" && end < len(s) && s[end] == ':' {
			if k := nameEnd(s, end+1); k > end+1 {
				// "{config_source}:key": the key of the config file.
				name = s[end+1 : k]
				placeholder = "{" + name + "}"
				end = k
				val, ok, err = r.configKey(name, unk)
			} else {
				val, ok, err = r.resolveName(sc, name, unk)
			}
		} else {
			val, ok, err = r.resolveName(sc, name, unk)
		}
		if err != nil {
			return "", err
		}
		if ok {
			if r.substituted+len(val) > MaxOutput {
				if !r.lenient {
					return "", fmt.Errorf("%w: substituting {%s} would pass %d bytes", ErrTooLarge, name, MaxOutput)
				}
				ok = false
			} else {
				r.substituted += len(val)
			}
		}
		if ok {
			if name == "output_folder" {
				projectOutput(&b, val, r.base["project-root"])
			}
			b.WriteString(val)
		} else {
			b.WriteString(placeholder)
			unk.add(name)
		}
		i = end
	}
	return b.String(), nil
}

// projectOutput drops the project root written just before an absolute
// output folder: "{project-root}/{output_folder}/x", which installers up to
// BMAD 6.10 leave in config values, and "/project/{output_folder}/x", a
// path into the literal "{output_folder}" folder they create, are the
// output folder itself ("/outputs/x"), not a folder under the project.
func projectOutput(b *strings.Builder, val, root string) {
	root = strings.TrimSuffix(root, "/")
	if !strings.HasPrefix(val, "/") || root == "" {
		return
	}
	prefix := root + "/"
	s := b.String()
	if !strings.HasSuffix(s, prefix) {
		return
	}
	kept := s[:len(s)-len(prefix)]
	b.Reset()
	b.WriteString(kept)
}
