package memlog

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// isPySpace reports whether r is whitespace to Python's str.isspace, which
// str.split() and str.strip() use: Unicode White_Space (Go's unicode.IsSpace)
// plus the separators U+001C..U+001F. The two sets were compared over all
// code points with Python 3.11; White_Space is stable across Unicode versions.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// isPyLineBreak reports whether r ends a line for Python's str.splitlines
// ("\r\n" counts as one break; splitLines handles that).
func isPyLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// splitLines is Python's str.splitlines(): no line-break characters kept, no
// empty last line for a trailing break, and no lines at all for "".
func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isPyLineBreak(r) {
			i += size
			continue
		}
		lines = append(lines, s[start:i])
		i += size
		if r == '\r' && i < len(s) && s[i] == '\n' {
			i++
		}
		start = i
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// pySplit is Python's str.split() with no separator.
func pySplit(s string) []string {
	return strings.FieldsFunc(s, isPySpace)
}

// pyStrip is Python's str.strip() with no argument.
func pyStrip(s string) string {
	return strings.TrimFunc(s, isPySpace)
}

// pyRepr approximates Python's repr of a str, for the script's error
// message: single quotes unless the text holds ' and no ", and escapes for
// the backslash, the quote, \t \n \r and non-printable characters (\xhh,
// \uhhhh, \Uhhhhhhhh). Printability is Go's unicode.IsPrint, which matches
// Python's str.isprintable except where their Unicode versions differ. An
// invalid UTF-8 byte shows as the surrogate escape \udcXX, as Python shows
// an undecodable byte of argv.
func pyRepr(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += size
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteByte(quote)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}
