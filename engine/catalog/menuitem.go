package catalog

import (
	"strings"
)

// newMenuItem builds a menu item from its command as written and its shown
// text, filling Trigger, Code and Description.
func newMenuItem(cmd, label string) MenuItem {
	it := MenuItem{Cmd: strings.TrimSpace(cmd)}
	it.Trigger, it.Code = parseCmd(it.Cmd)
	code, desc := splitLabel(label)
	if it.Code == "" {
		it.Code = code
	}
	it.Description = desc
	return it
}

// parseCmd splits a command as written into the trigger people type and a
// short code: "*create-prd" → ("create-prd", ""); "CP or fuzzy match on
// create-prd" → ("create-prd", "CP"); "*agents [agent]" → ("agents", "").
func parseCmd(cmd string) (trigger, code string) {
	s := strings.TrimSpace(cmd)
	if c, rest, ok := cutFuzzy(s); ok {
		return firstWord(strings.TrimPrefix(rest, "*")), c
	}
	return firstWord(strings.TrimPrefix(s, "*")), ""
}

// cutFuzzy recognises "XX or fuzzy match on trigger" (case-insensitive).
func cutFuzzy(s string) (code, rest string, ok bool) {
	const sep = " or fuzzy match on "
	i := strings.Index(strings.ToLower(s), sep)
	if i <= 0 {
		return "", "", false
	}
	code = strings.TrimPrefix(strings.TrimSpace(s[:i]), "*")
	if !isCode(code) {
		return "", "", false
	}
	rest = strings.TrimSpace(s[i+len(sep):])
	if rest == "" {
		return "", "", false
	}
	return code, rest, true
}

// splitLabel separates a "[CP] " prefix from a description.
func splitLabel(label string) (code, desc string) {
	desc = strings.TrimSpace(label)
	if !strings.HasPrefix(desc, "[") {
		return "", desc
	}
	end := strings.IndexByte(desc, ']')
	if end < 2 || !isCode(desc[1:end]) {
		return "", desc
	}
	return desc[1:end], strings.TrimSpace(desc[end+1:])
}

// isCode reports whether s looks like a short menu code: 1 to 4 letters or
// digits.
func isCode(s string) bool {
	if len(s) == 0 || len(s) > 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// firstWord returns s up to its first white space.
func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// setHandler stores a handler attribute or key on the item; it reports
// whether key names a handler.
func (it *MenuItem) setHandler(key, val string) bool {
	val = strings.TrimSpace(val)
	switch strings.ToLower(key) {
	case "workflow", "run-workflow":
		it.Workflow = val
	case "exec":
		it.Exec = val
		it.Skill = execSkill(val) // exec="skill:NAME" (BMAD 6.1, 6.2)
	case "tmpl":
		it.Tmpl = val
	case "data":
		it.Data = val
	case "action":
		it.Action = val
	case "validate-workflow":
		it.ValidateWorkflow = val
	default:
		return false
	}
	return true
}
