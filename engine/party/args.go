package party

import (
	"fmt"
	"strings"
)

// ParseArgs reads the party options from the arguments a skill was invoked
// with ("--party writers-room --mode subagent"): --party ID or --group ID
// (also as --party=ID), --list-groups, --mode MODE, --subagents (subagent
// mode), --with NAMES (an inline cast, names split at commas). Other words are left for the model and returned as rest. A flag
// missing its value is an error.
func ParseArgs(args string) (req Request, rest string, err error) {
	words := strings.Fields(args)
	var other []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		flag, val, hasVal := strings.Cut(w, "=")
		switch flag {
		case "--party", "--group", "--mode", "--with":
			if !hasVal {
				if i+1 >= len(words) || strings.HasPrefix(words[i+1], "--") {
					return Request{}, "", fmt.Errorf("%s needs a value", flag)
				}
				i++
				val = words[i]
			}
			switch flag {
			case "--mode":
				req.Mode = val
			case "--with":
				req.With = append(req.With, splitNames(val)...)
			default:
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

// Command is a party started in words: "party [mode] [--flags] [with
// NAMES] [about|on|: TOPIC]".
type Command struct {
	Request
	Topic string
}

// commandOpeners are the words after "party" that make a message a party
// command rather than a sentence that starts with the word.
var commandOpeners = map[string]bool{"mode": true, "with": true, "about": true, "on": true}

// ParseCommand reads a message that starts a party: "party", "party mode",
// "party with Winston and Mary about pricing", "party --party
// code-review-crew --mode subagent on this diff". ok is false for any
// other message; err is set for a party command with a flag missing its
// value.
func ParseCommand(text string) (c Command, ok bool, err error) {
	words := strings.Fields(text)
	if len(words) == 0 || !strings.EqualFold(strings.TrimLeft(words[0], "/"), "party") {
		return Command{}, false, nil
	}
	if len(words) > 1 {
		next := strings.ToLower(words[1])
		if !commandOpeners[next] && !strings.HasPrefix(next, "--") && !strings.HasPrefix(next, ":") {
			return Command{}, false, nil
		}
		if next == "mode" {
			words = words[1:]
		}
	}
	req, rest, err := ParseArgs(strings.Join(words[1:], " "))
	if err != nil {
		return Command{}, true, err
	}
	c.Request = req
	var with []string
	with, c.Topic = invite(rest)
	c.With = append(c.With, with...)
	return c, true, nil
}

// invite splits "with Winston, Mary and John about X" into the names and
// the topic; text without "with" is all topic.
func invite(text string) (names []string, topic string) {
	t := strings.TrimSpace(strings.TrimPrefix(text, ":"))
	low := strings.ToLower(t)
	if !strings.HasPrefix(low, "with ") {
		return nil, trimTopic(t)
	}
	t, low = t[5:], low[5:]
	end := len(t)
	for _, sep := range []string{" about ", " on ", ":", " to "} {
		if i := strings.Index(low, sep); i >= 0 && i < end {
			end = i
		}
	}
	return splitNames(t[:end]), trimTopic(t[end:])
}

// splitNames splits "Winston, Mary and John" into names.
func splitNames(s string) []string {
	var names []string
	cast := strings.NewReplacer(" and ", ",", " & ", ",", " AND ", ",").Replace(" " + s + " ")
	for _, n := range strings.Split(cast, ",") {
		if n = strings.TrimSpace(n); n != "" && !strings.EqualFold(n, "and") {
			names = append(names, n)
		}
	}
	return names
}

// trimTopic drops the word or colon that introduces a topic.
func trimTopic(t string) string {
	t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), ":"))
	for _, w := range []string{"about ", "on ", "to "} {
		if len(t) >= len(w) && strings.EqualFold(t[:len(w)], w) {
			return strings.TrimSpace(t[len(w):])
		}
	}
	return t
}
