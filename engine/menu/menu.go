package menu

import (
	"fmt"
	"strconv"
	"strings"

	"agentbot/engine/catalog"
	"agentbot/engine/prompt"
)

// Match finds the menu item an input picks: its number ("3"), its
// *command, its short code ("CP") or its exact trigger. A *command may be
// followed by more text ("*brief for the checkout"); a number, code or bare
// trigger picks only when it is the whole input, so "help me plan" or
// "3 days ago..." stay ordinary messages. It returns the item's index and
// the rest of the input after the pick.
func Match(menu []catalog.MenuItem, input string) (int, string, bool) {
	head, rest, ok := menuHead(input)
	if !ok {
		return -1, "", false
	}
	if n, err := strconv.Atoi(head); err == nil {
		if n >= 1 && n <= len(menu) {
			return n - 1, rest, true
		}
		return -1, "", false
	}
	star := strings.HasPrefix(head, "*")
	h := strings.ToLower(strings.TrimPrefix(head, "*"))
	if h == "" {
		return -1, "", false
	}
	if i, ok := itemByName(menu, h, !star); ok {
		return i, rest, true
	}
	return -1, "", false
}

// menuHead splits an input into the word that may pick a menu item, its
// trailing ".", ")" or ":" dropped, and the rest. It reports false for an
// empty input and for more text after anything but a *command.
func menuHead(input string) (head, rest string, ok bool) {
	input = strings.TrimSpace(input)
	if input == "" {
		return "", "", false
	}
	head, rest, _ = strings.Cut(input, " ")
	rest = strings.TrimSpace(rest)
	head = strings.TrimRight(head, ".):")
	if rest != "" && !strings.HasPrefix(head, "*") {
		return "", "", false
	}
	return head, rest, true
}

// itemByName finds the first item whose trigger, command or skill is h (in
// lower case), else, withCode, the first whose short code is h.
func itemByName(menu []catalog.MenuItem, h string, withCode bool) (int, bool) {
	for i, it := range menu {
		if strings.ToLower(it.Trigger) == h || strings.ToLower(strings.TrimPrefix(it.Cmd, "*")) == h ||
			(it.Skill != "" && strings.ToLower(it.Skill) == h) {
			return i, true
		}
	}
	if withCode {
		for i, it := range menu {
			if it.Code != "" && strings.EqualFold(it.Code, h) {
				return i, true
			}
		}
	}
	return -1, false
}

// PickNote tells the model which item the user chose.
func PickNote(a *catalog.Agent, idx int, it catalog.MenuItem, input, rest string, preloaded bool) string {
	var b strings.Builder
	b.WriteString(input)
	if idx < 0 {
		fmt.Fprintf(&b, "\n\n(The user asked for the skill %s.", it.Skill)
	} else {
		fmt.Fprintf(&b, "\n\n(The user picked menu item %d: %s.", idx+1, prompt.MenuLabel(it))
	}
	switch {
	case it.Prompt != "":
		b.WriteString(" Carry out its prompt now as my instruction: ")
		b.WriteString(it.Prompt)
		if preloaded {
			b.WriteString(" The skill it names is loaded above by the runtime, customization and config already resolved; keep your persona.")
		}
	case it.Skill != "" && preloaded:
		fmt.Fprintf(&b, " The runtime loaded the skill %s above, customization and config resolved: run it now, keeping your persona, and stop at the first point that needs my input.", it.Skill)
	case preloaded:
		b.WriteString(" Its files are loaded above by the runtime; start executing it now, following the workflow engine instructions exactly, and stop at the first point that needs my input.")
	case strings.HasPrefix(it.Action, "#"):
		id := strings.TrimPrefix(it.Action, "#")
		for _, p := range a.Prompts {
			if p.ID == id {
				fmt.Fprintf(&b, " Run prompt #%s from your instructions now.", id)
				break
			}
		}
	case it.Action != "":
		b.WriteString(" Carry out its action now: ")
		b.WriteString(it.Action)
	}
	if rest != "" {
		b.WriteString(" The user added: ")
		b.WriteString(rest)
	}
	b.WriteString(")")
	return b.String()
}

// Intent finds the menu item a first message clearly names inside a
// sentence: a code written as its own word ("let's write the PRD"), a skill
// name, or a description whose words the message carries. It reports false
// when nothing or more than one item fits.
func Intent(menu []catalog.MenuItem, input string) (int, bool) {
	words := strings.FieldsFunc(input, func(r rune) bool {
		return !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r > 127)
	})
	if len(words) == 0 || len(words) > 30 {
		return -1, false
	}
	if i, ok := onlyMatch(menu, func(it catalog.MenuItem) bool { return namesItem(it, words) }); ok {
		return i, true
	}
	return describedItem(menu, words)
}

// onlyMatch returns the one menu item match accepts; false when none or
// several do.
func onlyMatch(menu []catalog.MenuItem, match func(catalog.MenuItem) bool) (int, bool) {
	found := -1
	for i, it := range menu {
		if match(it) {
			if found >= 0 {
				return -1, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// namesItem reports whether one of words is the item's code, written in
// capitals as its own word, or its skill name.
func namesItem(it catalog.MenuItem, words []string) bool {
	for _, w := range words {
		if len(it.Code) >= 2 && w == strings.ToUpper(w) && strings.EqualFold(w, it.Code) {
			return true
		}
		if it.Skill != "" && strings.EqualFold(w, it.Skill) {
			return true
		}
	}
	return false
}

// describedItem finds the item whose distinctive description words the
// message carries: at least two of them, and no other item with any.
func describedItem(menu []catalog.MenuItem, words []string) (int, bool) {
	in := map[string]bool{}
	for _, w := range words {
		in[Stem(w)] = true
	}
	best, bestScore, second := -1, 0, 0
	for i, it := range menu {
		score := descriptionScore(it, in)
		switch {
		case score > bestScore:
			best, second, bestScore = i, bestScore, score
		case score > second:
			second = score
		}
	}
	if bestScore >= 2 && second == 0 {
		return best, true
	}
	return -1, false
}

// descriptionScore counts the item's distinctive description and skill
// words that are among the message's stems.
func descriptionScore(it catalog.MenuItem, in map[string]bool) int {
	score := 0
	for _, w := range strings.Fields(strings.ToLower(it.Description + " " + strings.TrimPrefix(it.Skill, "bmad-"))) {
		w = strings.Trim(w, ".,;:()—-'\"")
		if len(w) >= 4 && !stopWords[w] && in[Stem(w)] {
			score++
		}
	}
	return score
}

// Stem folds a word for loose matching: lower case, a plural "s" dropped.
func Stem(w string) string {
	w = strings.ToLower(w)
	if len(w) > 4 && strings.HasSuffix(w, "s") {
		w = w[:len(w)-1]
	}
	return w
}

// stopWords are words too common to say which item is meant.
var stopWords = map[string]bool{
	"with": true, "that": true, "this": true, "from": true, "your": true, "into": true, "through": true,
	"when": true, "will": true, "what": true, "want": true, "need": true, "help": true, "create": true,
	"update": true, "make": true, "about": true, "their": true, "them": true, "then": true, "also": true,
}

// PlainHelp reports whether a menu item is a plain *help, with no handler
// of its own: the runtime shows the menu itself, without a model call.
func PlainHelp(it catalog.MenuItem) bool {
	return strings.EqualFold(it.Trigger, "help") && it.Workflow == "" && it.Exec == "" && it.Action == ""
}
