// Package vars resolves {variables} deterministically: path variables, config
// keys, references between keys of one workflow.yaml, "{config_source}:key",
// "date: system-generated" and "A || B" fallbacks. {{double}} placeholders are
// left for the model.
//
// # Syntax
//
// A variable is "{name}", name being one or more ASCII letters, digits, '_',
// '-' or '.'. Anything else in braces ("{}", "{a b}", "{path/to}") is plain
// text. "{{...}}" (no braces inside) is the model's placeholder and is kept
// as is, also inside longer text; any other "{{" is plain text.
//
// Values are expanded recursively: a value holding {names} is expanded
// before it is substituted, and the result is never scanned again. A value
// referring back to itself, directly or through others, is a *CycleError;
// nesting deeper than MaxDepth wraps ErrTooDeep, and substituting more than
// MaxOutput bytes in one call wraps ErrTooLarge. Each definition is
// expanded once per call, so shared references never blow up.
//
// An absolute {output_folder} written right after the project root
// ("{project-root}/{output_folder}/x", as BMAD installers up to 6.10 leave
// config values) stands for the output folder itself: the root before it
// is dropped.
//
// # Fallbacks
//
// A whole value "A || B || C" is a fallback chain when every alternative but
// the last holds a {name} placeholder ("||" inside {{...}} does not count),
// so shell text like "npm test || true" stays plain. Alternatives are
// trimmed of spaces. The chain resolves to the first alternative that
// expands with no unknown names to something other than blanks; otherwise
// to the last alternative, expanded as any value (an unknown name there is
// an error for Expand, a kept placeholder for ExpandPartial). For Expand and
// ResolveWorkflow a cycle or a limit in any alternative is an error, not a
// reason to fall back; ExpandPartial treats it as an unknown name. The rule
// applies to the string given to Expand and to every variable's value.
//
// # Workflows
//
// "{config_source}:key", "system-generated" values and references between
// a workflow's keys are understood by ResolveWorkflow only; for Expand,
// "{config_source}:key" is the variable config_source followed by ":key".
// See ResolveWorkflow for the order in which a workflow's names resolve,
// and ParseConfig for how a config.yaml becomes Vars.
package vars

import (
	"sort"
	"strings"
)

// Vars maps variable names, without braces, to values.
type Vars map[string]string

// UnknownError reports a variable that has no value, with the known names.
type UnknownError struct {
	Name  string
	Known []string // sorted
}

// Expand replaces every {name} in s. An unknown variable is an *UnknownError.
func Expand(s string, v Vars) (string, error) {
	if strings.IndexByte(s, '{') < 0 {
		return s, nil
	}
	r := resolver{base: v}
	var unk names
	out, err := r.expandValue(s, scopeBase, &unk)
	if err != nil {
		return "", err
	}
	if len(unk.list) > 0 {
		return "", &UnknownError{Name: unk.list[0], Known: v.Names()}
	}
	return out, nil
}

// ExpandPartial replaces the variables it knows and leaves the others in
// place, returning their names.
//
// The names are deduplicated, in order of appearance, nil when all were
// known. It never fails: a variable caught in a cycle, nested too deeply or
// too large to substitute is left in place and listed like an unknown one.
func ExpandPartial(s string, v Vars) (string, []string) {
	if strings.IndexByte(s, '{') < 0 {
		return s, nil
	}
	r := resolver{base: v, lenient: true}
	var unk names
	out, err := r.expandValue(s, scopeBase, &unk)
	if err != nil {
		// Unreachable: a lenient resolver reports no errors.
		return s, nil
	}
	return out, unk.list
}

// Names returns the variable names of v, sorted.
func (v Vars) Names() []string {
	out := make([]string, 0, len(v))
	for k := range v {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// IsPinned reports whether name is a session variable that a workflow or
// config file cannot override when the session (base) defines it: the path
// variables (any name ending in "-root", such as project-root, bundle-root
// and core-root), output_folder, input_folder and date.
func IsPinned(name string) bool {
	switch name {
	case "output_folder", "input_folder", "date":
		return true
	}
	return strings.HasSuffix(name, "-root")
}
