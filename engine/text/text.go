// Package text cuts strings for people to read without splitting what
// they see as one character: a grapheme cluster (Unicode UAX #29, by
// github.com/rivo/uniseg), such as an emoji with its modifiers and
// joiners, a flag's two regional indicators, or a letter with its
// combining marks.
package text

import (
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Cut returns s when it has at most n characters (runes); else its longest
// prefix of whole grapheme clusters with at most n runes, then suffix.
func Cut(s string, n int, suffix string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return s[:Prefix(s, n)] + suffix
}

// CutBytes is Cut counting bytes: s when it has at most n bytes, else its
// longest prefix of whole grapheme clusters with at most n bytes, then
// suffix.
func CutBytes(s string, n int, suffix string) string {
	if len(s) <= n {
		return s
	}
	return s[:prefix(s, n, false)] + suffix
}

// Prefix returns the byte length of the longest prefix of s made of whole
// grapheme clusters with at most n runes: 0 when the first cluster alone
// has more.
func Prefix(s string, n int) int { return prefix(s, n, true) }

// prefix is Prefix counting runes, or else bytes.
func prefix(s string, n int, runes bool) int {
	end, used, state := 0, 0, -1
	for rest := s; rest != ""; {
		var c string
		c, rest, _, state = uniseg.FirstGraphemeClusterInString(rest, state)
		k := len(c)
		if runes {
			k = utf8.RuneCountInString(c)
		}
		if used+k > n {
			break
		}
		used += k
		end += len(c)
	}
	return end
}
