package vars

import "strings"

// tokKind says what a token of a value is.
type tokKind uint8

const (
	tokText   tokKind = iota // literal text, copied as is
	tokVar                   // {name}
	tokDouble                // {{...}}: the model's placeholder, copied as is
)

// isNameByte reports whether c may appear in a variable name: ASCII
// letters, digits, '_', '-' and '.'.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.'
}

// nameEnd returns the end of the run of name bytes starting at s[i].
func nameEnd(s string, i int) int {
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	return i
}

// token returns the kind and end offset of the token starting at s[i]
// (i < len(s)). For tokVar the name is s[i+1 : end-1].
//
// "{{" followed by text without braces and then "}}" is one tokDouble; any
// other "{{" is literal text. "{" followed by one or more name bytes and "}"
// is a tokVar; any other "{" is literal text.
func token(s string, i int) (tokKind, int) {
	if s[i] != '{' {
		n := strings.IndexByte(s[i+1:], '{')
		if n < 0 {
			return tokText, len(s)
		}
		return tokText, i + 1 + n
	}
	if i+1 < len(s) && s[i+1] == '{' {
		for j := i + 2; j < len(s); j++ {
			c := s[j]
			if c == '{' {
				break
			}
			if c == '}' {
				if j+1 < len(s) && s[j+1] == '}' {
					return tokDouble, j + 2
				}
				break
			}
		}
		return tokText, i + 2
	}
	j := nameEnd(s, i+1)
	if j > i+1 && j < len(s) && s[j] == '}' {
		return tokVar, j + 1
	}
	return tokText, i + 1
}

// hasVar reports whether s holds at least one {name} placeholder.
func hasVar(s string) bool {
	for i := 0; i < len(s); {
		k, end := token(s, i)
		if k == tokVar {
			return true
		}
		i = end
	}
	return false
}

// splitFallback splits a value of the form "A || B || C" into its trimmed
// alternatives. It returns nil unless the value is a fallback chain: at
// least two alternatives, each but the last holding a {name} placeholder.
// "||" inside a {{...}} placeholder does not split. So "npm test || true"
// and "{{a || b}}" are plain values.
func splitFallback(s string) []string {
	if !strings.Contains(s, "||") {
		return nil
	}
	var alts []string
	start := 0
	for i := 0; i < len(s); {
		k, end := token(s, i)
		if k == tokText {
			for {
				n := strings.Index(s[i:end], "||")
				if n < 0 {
					break
				}
				alts = append(alts, strings.TrimSpace(s[start:i+n]))
				i += n + 2
				start = i
			}
		}
		i = end
	}
	if alts == nil {
		return nil
	}
	alts = append(alts, strings.TrimSpace(s[start:]))
	for _, a := range alts[:len(alts)-1] {
		if !hasVar(a) {
			return nil
		}
	}
	return alts
}
