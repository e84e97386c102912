package party

import (
	"fmt"
	"strings"
)

// ParseArgs reads the party options from the arguments a skill was invoked
// with ("--party writers-room --mode subagent"): --party ID or --group ID
// (also as --party=ID), --list-groups, --mode MODE, --subagents (subagent
// mode). Other words are left for the model and returned as rest. A flag
// missing its value is an error.
func ParseArgs(args string) (req Request, rest string, err error) {
	words := strings.Fields(args)
	var other []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		flag, val, hasVal := strings.Cut(w, "=")
		switch flag {
		case "--party", "--group", "--mode":
			if !hasVal {
				if i+1 >= len(words) || strings.HasPrefix(words[i+1], "--") {
					return Request{}, "", fmt.Errorf("%s needs a value", flag)
				}
				i++
				val = words[i]
			}
			if flag == "--mode" {
				req.Mode = val
			} else {
				req.Party = val
			}
		case "--list-groups":
			req.ListGroups = true
		case "--subagents":
			req.Mode = ModeSubagent
		default:
			other = append(other, w)
		}
	}
	return req, strings.Join(other, " "), nil
}
