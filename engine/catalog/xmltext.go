package catalog

import (
	"encoding/xml"
	"strings"
	"unicode/utf8"
)

// decodeXMLText decodes entities and unwraps CDATA sections in raw markup.
// Unknown or malformed entities stay as written.
func decodeXMLText(s string) string {
	if !strings.ContainsAny(s, "&<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "<![CDATA["):
			body := s[i+len("<![CDATA["):]
			end := strings.Index(body, "]]>")
			if end < 0 {
				b.WriteString(body)
				return b.String()
			}
			b.WriteString(body[:end])
			i += len("<![CDATA[") + end + len("]]>")
		case s[i] == '&':
			r, n := decodeEntity(s[i:])
			if n == 0 {
				b.WriteByte('&')
				i++
				continue
			}
			b.WriteString(r)
			i += n
		default:
			j := i + 1
			for j < len(s) && s[j] != '&' && s[j] != '<' {
				j++
			}
			if j < len(s) && s[j] == '<' && !strings.HasPrefix(s[j:], "<![CDATA[") {
				j++ // a plain '<' is copied as text
			}
			b.WriteString(s[i:j])
			i = j
		}
	}
	return b.String()
}

// xmlEntities are the five entities XML itself predefines.
var xmlEntities = map[string]string{"lt": "<", "gt": ">", "amp": "&", "apos": "'", "quot": `"`}

// decodeEntity decodes the entity at the start of s ("&amp;", "&#39;",
// "&#x27;", "&nbsp;"), returning its text and length, or 0 if there is none.
func decodeEntity(s string) (string, int) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 12 {
		return "", 0
	}
	name := s[1:semi]
	if name[0] == '#' {
		r, ok := charRef(name[1:])
		if !ok {
			return "", 0
		}
		return string(r), semi + 1
	}
	if v, ok := xmlEntities[name]; ok {
		return v, semi + 1
	}
	if v, ok := xml.HTMLEntity[name]; ok {
		return v, semi + 1
	}
	return "", 0
}

// charRef reads the number of a character reference ("39", "x27"); ok is
// false when it is not a number or not a character XML allows.
func charRef(num string) (rune, bool) {
	base := rune(10)
	if num != "" && (num[0] == 'x' || num[0] == 'X') {
		base, num = 16, num[1:]
	}
	if num == "" {
		return 0, false
	}
	var r rune
	for _, c := range num {
		v := digitValue(c)
		if v < 0 || v >= base {
			return 0, false
		}
		r = r*base + v
		if r > utf8.MaxRune {
			return 0, false
		}
	}
	return r, isXMLChar(r)
}

// digitValue is the value of a hexadecimal digit, -1 for anything else.
func digitValue(c rune) rune {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return -1
}

// cleanText trims s, drops trailing spaces from its lines and removes the
// indentation its continuation lines share, so a value written across
// indented lines reads as a plain paragraph.
func cleanText(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
	if !strings.Contains(s, "\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	indent := -1
	for i, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		lines[i] = l
		if i == 0 || l == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(lines[0])
	for _, l := range lines[1:] {
		b.WriteByte('\n')
		if indent > 0 && len(l) >= indent {
			l = l[indent:]
		}
		b.WriteString(l)
	}
	return b.String()
}
