// Package flagargs parses a command's flags wherever they stand among its
// arguments, and checks the ranges of the settings they give.
package flagargs

import "flag"

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
