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

// decodeEntity decodes the entity at the start of s ("&amp;", "&#39;",
// "&#x27;", "&nbsp;"), returning its text and length, or 0 if there is none.
func decodeEntity(s string) (string, int) {
	semi := strings.IndexByte(s, ';')
	if semi < 2 || semi > 12 {
		return "", 0
	}
	name := s[1:semi]
	if name[0] == '#' {
		var r rune
		num := name[1:]
		hex := len(num) > 0 && (num[0] == 'x' || num[0] == 'X')
		if hex {
			num = num[1:]
		}
		if num == "" {
			return "", 0
		}
		for _, c := range num {
			var v rune
			switch {
			case '0' <= c && c <= '9':
				v = c - '0'
			case hex && 'a' <= c && c <= 'f':
				v = c - 'a' + 10
			case hex && 'A' <= c && c <= 'F':
				v = c - 'A' + 10
			default:
				return "", 0
			}
			if hex {
				r = r*16 + v
			} else {
				r = r*10 + v
			}
			if r > utf8.MaxRune {
				return "", 0
			}
		}
		if !isXMLChar(r) {
			return "", 0
		}
		return string(r), semi + 1
	}
	switch name {
	case "lt":
		return "<", semi + 1
	case "gt":
		return ">", semi + 1
	case "amp":
		return "&", semi + 1
	case "apos":
		return "'", semi + 1
	case "quot":
		return `"`, semi + 1
	}
	if v, ok := xml.HTMLEntity[name]; ok {
		return v, semi + 1
	}
	return "", 0
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
