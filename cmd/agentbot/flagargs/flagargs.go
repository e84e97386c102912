// Package flagargs parses a command's flags wherever they stand among its
// arguments, holds its repeatable list flags (List), and checks the
// ranges of the settings they give.
package flagargs

import (
	"flag"
	"strings"
)

// Parse parses flags wherever they stand among the arguments,
// so "sessions prune --older-than 1h" and "sessions export ID -o FILE" work
// as the usage line shows. It returns the other arguments in order; those
// after "--" are taken as they are.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// List is a repeatable flag of a comma-separated list: each use adds to
// Dst. The environment's value applies only when no flag was given: the
// first use replaces the default.
type List struct {
	Dst *[]string
	set bool
}

// String is the list, comma-separated.
func (l *List) String() string {
	if l == nil || l.Dst == nil {
		return ""
	}
	return strings.Join(*l.Dst, ",")
}

// Set adds v's items (SplitList) to the list.
func (l *List) Set(v string) error {
	if !l.set {
		*l.Dst = nil
		l.set = true
	}
	*l.Dst = append(*l.Dst, SplitList(v)...)
	return nil
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
