package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

const (
	family = "\U0001F468\u200D\U0001F469\u200D\U0001F467" // 👨‍👩‍👧: 5 runes, 1 cluster
	thumbs = "\U0001F44D\U0001F3FD"                       // 👍🏽: 2 runes
	france = "\U0001F1EB\U0001F1F7"                       // 🇫🇷
	japan  = "\U0001F1EF\U0001F1F5"                       // 🇯🇵
	eAcute = "e\u0301"                                    // é as e + combining acute
	zalgo  = "a\u0301\u0302\u0303\u0304"                  // 5 runes, 1 cluster
)

func TestCut(t *testing.T) {
	cases := []struct {
		s      string
		n      int
		suffix string
		want   string
	}{
		{"hello", 5, "…", "hello"},
		{"hello", 4, "…", "hell…"},
		{"hello", 0, "…", "…"},
		{"", 0, "…", ""},
		{"ab" + family, 6, "…", "ab…"},         // the family is not split after its man
		{"ab" + family, 7, "…", "ab" + family}, // fits
		{"ab" + family + "c", 7, "…", "ab" + family + "…"},
		{thumbs + thumbs, 3, "…", thumbs + "…"},     // skin tone stays with its thumb
		{france + japan, 3, "…", france + "…"},      // flags are not split or re-paired
		{"x" + france + japan, 4, "", "x" + france}, // odd run: still whole flags
		{"caf" + eAcute + "s", 4, "…", "caf…"},      // the accent stays with its e
		{"caf" + eAcute + "s", 5, "…", "caf" + eAcute + "…"},
		{zalgo + "b", 3, "…", "…"}, // a cluster longer than n: nothing of it
		{"a\r\nb", 2, "…", "a…"},   // CR LF is one cluster
	}
	for _, c := range cases {
		if got := Cut(c.s, c.n, c.suffix); got != c.want {
			t.Errorf("Cut(%q, %d, %q) = %q, want %q", c.s, c.n, c.suffix, got, c.want)
		}
	}
}

func TestCutBytes(t *testing.T) {
	cases := []struct {
		s, suffix string
		n         int
		want      string
	}{
		{"hello", "...", 5, "hello"},
		{"hello", "...", 3, "hel..."},
		{"aé", "", 2, "a"}, // é is 2 bytes
		{"a" + family, " …(cut)", 10, "a …(cut)"},
		{"a" + family, "", 1 + len(family), "a" + family},
		{"a" + eAcute + "b", "…", 3, "a…"}, // not "ae"
		{"x\xff\xfey", "", 3, "x\xff\xfe"}, // invalid bytes count one each
	}
	for _, c := range cases {
		if got := CutBytes(c.s, c.n, c.suffix); got != c.want {
			t.Errorf("CutBytes(%q, %d, %q) = %q, want %q", c.s, c.n, c.suffix, got, c.want)
		}
	}
}

// No cut of a long mixed string splits a cluster or leaves invalid UTF-8,
// and each prefix is within its limit.
func TestPrefixNeverSplits(t *testing.T) {
	s := strings.Repeat("a"+family+thumbs+france+eAcute+"日本"+zalgo+" ", 5)
	clusters := map[int]bool{0: true}
	end := 0
	for range 5 {
		for _, c := range []string{"a", family, thumbs, france, eAcute, "日", "本", zalgo, " "} {
			end += len(c)
			clusters[end] = true
		}
	}
	for n := 0; n <= utf8.RuneCountInString(s)+1; n++ {
		p := Prefix(s, n)
		if !clusters[p] {
			t.Fatalf("Prefix(s, %d) = %d, inside a cluster", n, p)
		}
		if r := utf8.RuneCountInString(s[:p]); r > n {
			t.Fatalf("Prefix(s, %d) has %d runes", n, r)
		}
	}
}
