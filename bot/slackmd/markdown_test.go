package slackmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// words builds deterministic prose of about n characters.
func words(seed, n int) string {
	vocab := []string{"agent", "workflow", "brief", "the", "market", "users", "scope", "risk", "metric", "plan", "goal", "we"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[(seed*7+i*5+i/3)%len(vocab)])
	}
	return b.String()
}

// fenceBalanced reports whether every ``` or ~~~ fence opened in piece is
// closed in it (a fence closes on a line of only its character, at least as
// long as the opener).
func fenceBalanced(piece string) bool {
	char, size := byte(0), 0
	for _, line := range strings.Split(piece, "\n") {
		t := strings.TrimSpace(line)
		n := 0
		for n < len(t) && (t[n] == '`' || t[n] == '~') && t[n] == t[0] {
			n++
		}
		switch {
		case size == 0 && n >= 3:
			char, size = t[0], n
		case size > 0 && n >= size && t[0] == char && n == len(t):
			size = 0
		}
	}
	return size == 0
}

// checkSplit asserts the contract of Split for text and max:
//   - every piece has at most max characters and is non-blank;
//   - every piece's fences are balanced when text's are;
//   - the pieces are spans of text plus added fence lines: the spans appear in
//     order and the text between and around them is whitespace only;
//   - independently of the spans: dropping fence lines and all whitespace,
//     the joined pieces equal the text.
func checkSplit(t *testing.T, text string, max int) []string {
	t.Helper()
	pieces := Split(text, max)
	spans := splitSpans(text, max)
	if len(spans) != len(pieces) {
		t.Fatalf("%d spans, %d pieces", len(spans), len(pieces))
	}
	balanced := fenceBalanced(text)
	prev := 0
	for i, p := range pieces {
		if n := utf8.RuneCountInString(p); n > max {
			t.Errorf("piece %d has %d characters, max %d", i, n, max)
		}
		if strings.TrimSpace(p) == "" {
			t.Errorf("piece %d is blank", i)
		}
		if !utf8.ValidString(p) && utf8.ValidString(text) {
			t.Errorf("piece %d is not valid UTF-8", i)
		}
		if balanced && !fenceBalanced(p) {
			t.Errorf("piece %d has unbalanced fences:\n%s", i, p)
		}
		sp := spans[i]
		if sp.render(text) != p {
			t.Errorf("piece %d does not render from its span", i)
		}
		if gap := text[prev:sp.start]; strings.TrimSpace(gap) != "" {
			t.Errorf("text dropped before piece %d: %q", i, gap)
		}
		if sp.end <= sp.start {
			t.Errorf("piece %d has an empty span", i)
		}
		prev = sp.end
	}
	if rest := text[prev:]; strings.TrimSpace(rest) != "" {
		t.Errorf("text dropped after the last piece: %q", rest)
	}
	if got, want := squeeze(strings.Join(pieces, "\n")), squeeze(text); got != want {
		t.Errorf("joined pieces differ from the text (fence lines and whitespace aside):\n got %.200q\nwant %.200q", got, want)
	}
	return pieces
}

// squeeze drops fence lines and all whitespace.
func squeeze(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			continue
		}
		for _, r := range t {
			if !unicode.IsSpace(r) {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

func TestSplitMarkdownShortAndEmpty(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"blank", "\n \n\t\n", nil},
		{"short", "Hello **world**", []string{"Hello **world**"}},
		{"trimmed blank lines", "\n\nHello\n\n", []string{"Hello"}},
		{"exactly max", strings.Repeat("a", 100), []string{strings.Repeat("a", 100)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.text, 100)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || len(got) != len(tc.want) {
				t.Errorf("Split = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSplitMarkdownLongAnswerAtParagraphs(t *testing.T) {
	var paras []string
	total := 0
	for i := 0; total < 25_000; i++ {
		p := words(i, 300+(i*137)%600)
		if i%5 == 0 {
			p = "## Section " + fmt.Sprint(i)
		}
		paras = append(paras, p)
		total += utf8.RuneCountInString(p) + 2
	}
	text := strings.Join(paras, "\n\n")
	if n := utf8.RuneCountInString(text); n < 24_000 || n > 26_000 {
		t.Fatalf("fixture has %d characters", n)
	}
	pieces := checkSplit(t, text, MaxPieceChars)
	if len(pieces) != 3 {
		t.Fatalf("%d pieces, want 3", len(pieces))
	}
	known := map[string]bool{}
	for _, p := range paras {
		known[p] = true
	}
	for i, piece := range pieces {
		for _, p := range strings.Split(piece, "\n\n") {
			if !known[p] {
				t.Errorf("piece %d holds a cut paragraph: %.60q", i, p)
			}
		}
	}
	// Rejoined with the blank lines that were dropped, the pieces are the text.
	if strings.Join(pieces, "\n\n") != text {
		t.Error("pieces joined with blank lines differ from the text")
	}
}

func TestSplitMarkdownLongFenceIsReopened(t *testing.T) {
	var code []string
	for i := range 300 {
		code = append(code, fmt.Sprintf("\tfmt.Println(%d) // %s", i, words(i, 20)))
	}
	text := "Here is the program:\n\n```go title=main.go\n" + strings.Join(code, "\n") + "\n```\n\nThat is all."
	pieces := checkSplit(t, text, 2000)
	if len(pieces) < 5 {
		t.Fatalf("%d pieces, want the code spread over several", len(pieces))
	}
	if pieces[0] != "Here is the program:" {
		t.Errorf("first piece = %.80q, want the intro alone (a boundary outside the fence exists)", pieces[0])
	}
	if pieces[len(pieces)-1] != "That is all." && !strings.HasSuffix(pieces[len(pieces)-1], "```\n\nThat is all.") {
		t.Errorf("last piece = %.80q", pieces[len(pieces)-1])
	}
	var got []string
	for i, p := range pieces[1:] {
		lines := strings.Split(p, "\n")
		if lines[0] != "```go title=main.go" {
			t.Errorf("code piece %d opens with %q", i+1, lines[0])
		}
		for _, l := range lines[1:] {
			if l == "```" {
				break
			}
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(code, "\n") {
		t.Error("code lines differ after splitting")
	}
}

func TestSplitMarkdownAvoidsFenceWhenBoundaryOutside(t *testing.T) {
	a, b := words(1, 900), words(2, 900)
	fence := "```\n" + words(3, 400) + "\n" + words(4, 400) + "\n```"
	text := a + "\n\n" + fence + "\n\n" + b
	pieces := checkSplit(t, text, 1500)
	want := []string{a, fence, b}
	if fmt.Sprint(pieces) != fmt.Sprint(want) {
		t.Errorf("pieces = %.100q\nwant whole blocks", pieces)
	}
	// With the fence right after a line of text and no blank line, the cut is
	// still before the fence.
	text = a + "\n" + fence + "\n" + b
	pieces = checkSplit(t, text, 1500)
	if len(pieces) != 3 || pieces[1] != fence {
		t.Errorf("pieces = %.100q", pieces)
	}
}

func TestSplitMarkdownTildeAndLongerFences(t *testing.T) {
	inner := "```go\nx := 1\n```"
	var body []string
	for i := range 40 {
		body = append(body, words(i, 60))
		if i%10 == 0 {
			body = append(body, inner)
		}
	}
	for _, open := range []string{"````markdown", "~~~text"} {
		marker := strings.TrimRight(open, "abcdefghijklmnopqrstuvwxyz")
		text := open + "\n" + strings.Join(body, "\n") + "\n" + marker
		pieces := checkSplit(t, text, 400)
		if len(pieces) < 3 {
			t.Fatalf("%s: %d pieces", open, len(pieces))
		}
		for i, p := range pieces {
			if !strings.HasPrefix(p, open+"\n") || !strings.HasSuffix(p, "\n"+marker) {
				t.Errorf("%s: piece %d not wrapped in the fence: %.40q ... %.20q", open, i, p, p[max(0, len(p)-20):])
			}
		}
	}
}

func TestSplitMarkdownLongInfoStringIsShortenedOnReopen(t *testing.T) {
	open := "```python " + strings.Repeat("x", 30)
	text := open + "\n" + strings.Repeat("print(1)\n", 20) + "```"
	pieces := checkSplit(t, text, 60)
	for i, p := range pieces[1:] {
		if !strings.HasPrefix(p, "```\n") {
			t.Errorf("piece %d reopens with %.20q, want a bare fence", i+1, p)
		}
	}
}

func TestSplitMarkdownKeepsListsWhole(t *testing.T) {
	intro := words(5, 3000)
	var items []string
	for i := range 40 {
		items = append(items, fmt.Sprintf("- item %d: %s", i, words(i, 140)))
	}
	outro := words(6, 3000)
	for _, sep := range []string{"\n", "\n\n"} { // tight and loose lists
		list := strings.Join(items, sep)
		text := intro + "\n\n" + list + "\n\n" + outro
		pieces := checkSplit(t, text, 8000)
		whole := false
		for _, p := range pieces {
			if strings.Contains(p, list) {
				whole = true
			}
		}
		if !whole {
			t.Errorf("list with separator %q was split although it fits in a piece: %d pieces", sep, len(pieces))
		}
	}

	// A list longer than a piece is cut between items, never inside one.
	var long []string
	for i := range 120 {
		long = append(long, fmt.Sprintf("%d. step %d: %s", i+1, i, words(i, 140)))
	}
	pieces := checkSplit(t, strings.Join(long, "\n"), 4000)
	if len(pieces) < 4 {
		t.Fatalf("%d pieces", len(pieces))
	}
	known := map[string]bool{}
	for _, it := range long {
		known[it] = true
	}
	for i, p := range pieces {
		for _, line := range strings.Split(p, "\n") {
			if !known[line] {
				t.Errorf("piece %d cuts an item: %.60q", i, line)
			}
		}
	}

	// Loose lists (blank lines between items) also break between items.
	pieces = checkSplit(t, strings.Join(long, "\n\n"), 4000)
	for i, p := range pieces {
		for _, item := range strings.Split(p, "\n\n") {
			if !known[item] {
				t.Errorf("loose list piece %d cuts an item: %.60q", i, item)
			}
		}
	}
}

func TestSplitMarkdownNoTinyPieceForAParagraphBreak(t *testing.T) {
	var lines []string
	for i := range 150 {
		lines = append(lines, words(i, 100))
	}
	text := "Sure!\n\n" + strings.Join(lines, "\n")
	pieces := checkSplit(t, text, 5000)
	if pieces[0] == "Sure!" {
		t.Error("the first piece holds only the opening line")
	}
	if n := utf8.RuneCountInString(pieces[0]); n < 4000 {
		t.Errorf("first piece has %d characters, want it filled", n)
	}
}

func TestSplitMarkdownHugeLine(t *testing.T) {
	line := words(9, 25_000)
	pieces := checkSplit(t, line, MaxPieceChars)
	if len(pieces) != 3 {
		t.Fatalf("%d pieces, want 3", len(pieces))
	}
	if strings.Join(pieces, " ") != line {
		t.Error("pieces joined with a space differ: a word was cut")
	}

	noSpace := strings.Repeat("abcdefghij", 2500)
	pieces = checkSplit(t, noSpace, MaxPieceChars)
	if len(pieces) != 3 || strings.Join(pieces, "") != noSpace {
		t.Errorf("%d pieces, rejoined equal: %v", len(pieces), strings.Join(pieces, "") == noSpace)
	}

	// A huge code line is cut inside the fence, which is closed and reopened.
	code := "```sh\necho " + strings.Repeat("0123456789", 300) + "\n```"
	pieces = checkSplit(t, code, 1000)
	if len(pieces) < 3 {
		t.Fatalf("%d pieces", len(pieces))
	}
	for i, p := range pieces {
		if !strings.HasPrefix(p, "```sh\n") || !strings.HasSuffix(p, "\n```") {
			t.Errorf("piece %d: %.20q", i, p)
		}
	}
}

func TestSplitMarkdownUnicodeNotCut(t *testing.T) {
	unit := "👩🏽‍💻漢字🇫🇷e\u0301👍🏻❤️"
	text := strings.Repeat(unit, 200) // one line without spaces
	bounds := map[int]bool{}
	for g, end := uniseg.NewGraphemes(text), 0; g.Next(); {
		end += len(g.Str())
		bounds[end] = true
	}
	for _, limit := range []int{32, 33, 47, 100} {
		pieces := checkSplit(t, text, limit)
		if strings.Join(pieces, "") != text {
			t.Fatalf("max %d: pieces do not rejoin to the text", limit)
		}
		end := 0
		for i, p := range pieces {
			if end += len(p); !bounds[end] {
				t.Errorf("max %d: piece %d ends inside a grapheme cluster: %q", limit, i, p[max(0, len(p)-12):])
			}
		}
	}
}

func TestSplitMarkdownMaxOutOfRange(t *testing.T) {
	text := words(1, 15_000)
	for _, max := range []int{0, -5} {
		pieces := Split(text, max)
		if len(pieces) != 2 {
			t.Errorf("max %d: %d pieces, want 2 of at most %d", max, len(pieces), MaxPieceChars)
		}
		for _, p := range pieces {
			if utf8.RuneCountInString(p) > MaxPieceChars {
				t.Errorf("max %d: piece of %d characters", max, utf8.RuneCountInString(p))
			}
		}
	}
	checkSplit(t, "```\n"+words(2, 300)+"\n```", MinPieceChars)
	for _, p := range Split(words(3, 300), 5) {
		if n := utf8.RuneCountInString(p); n > MinPieceChars {
			t.Errorf("max 5: piece of %d characters, want at most %d", n, MinPieceChars)
		}
	}
}

func TestSplitMarkdownInvalidUTF8(t *testing.T) {
	text := strings.Repeat("ok \xff\xfe bytes ", 100)
	pieces := Split(text, 64)
	if squeeze(strings.Join(pieces, "")) != squeeze(text) {
		t.Error("invalid bytes were lost")
	}
}

func TestMarkdownBlock(t *testing.T) {
	got, err := json.Marshal(Block("**hi**"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"type":"markdown","text":"**hi**"}` {
		t.Errorf("block JSON = %s", got)
	}
}

func TestFallback(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"empty", "", 50, ""},
		{"plain", "hello world", 50, "hello world"},
		{"heading emphasis code link", "# Title\n\nSome **bold** and _it_ text with `code` and [a link](http://x.y).", 100,
			"Title Some bold and it text with code and a link."},
		{"lists and quotes", "> quoted\n- item one\n* item two\n1. first\n- [x] done", 100, "quoted item one item two first done"},
		{"code fence kept as text", "Run:\n```sh\nmake test\n```", 100, "Run: make test"},
		{"snake_case survives", "set my_var_name and 2*3*4", 100, "set my_var_name and 2*3*4"},
		{"slack and auto links", "see <https://x.com|the site> or <https://y.com>", 100, "see the site or https://y.com"},
		{"image", "![diagram](http://x/y.png) below", 100, "diagram below"},
		{"table", "| a | b |\n|---|:-:|\n| 1 | 2 |", 100, "a b 1 2"},
		{"rules dropped", "one\n\n---\n\ntwo", 100, "one two"},
		{"strike and nested", "~~old~~ ***new***", 100, "old new"},
		{"whitespace collapsed", "a\n\n\tb   c", 100, "a b c"},
		{"truncated at a word", "the quick brown fox jumps over the lazy dog", 20, "the quick brown fox…"},
		{"n of one", "hello", 1, "…"},
		{"cut without spaces", strings.Repeat("x", 30), 10, strings.Repeat("x", 9) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Fallback(tc.in, tc.n); got != tc.want {
				t.Errorf("Fallback(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestFallbackLimits(t *testing.T) {
	long := words(4, 1000)
	if got := Fallback(long, 0); utf8.RuneCountInString(got) > DefaultFallbackChars || !strings.HasSuffix(got, "…") {
		t.Errorf("Fallback(n=0) = %d characters: %q", utf8.RuneCountInString(got), got)
	}
	emoji := strings.Repeat("👩🏽‍💻", 40)
	for n := 2; n < 30; n++ {
		got := Fallback(emoji, n)
		if utf8.RuneCountInString(got) > n || !utf8.ValidString(got) {
			t.Fatalf("n=%d: %q", n, got)
		}
		body := strings.TrimSuffix(got, "…")
		if last, _ := utf8.DecodeLastRuneInString(body); body != "" && (last == '\u200d' || !strings.HasSuffix(body, "💻")) {
			t.Errorf("n=%d: cluster cut: %q", n, got)
		}
	}
}

func BenchmarkSplitMarkdown100k(b *testing.B) {
	var parts []string
	for i := 0; len(strings.Join(parts, "\n\n")) < 100_000; i++ {
		switch i % 4 {
		case 0:
			parts = append(parts, "```go\n"+strings.Repeat(words(i, 60)+"\n", 20)+"```")
		case 1:
			parts = append(parts, "- "+words(i, 80)+"\n- "+words(i+1, 80))
		default:
			parts = append(parts, words(i, 400))
		}
	}
	text := strings.Join(parts, "\n\n")
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Split(text, MaxPieceChars)
	}
}

func TestEscapeText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                      "plain",
		"R&D <draft>.md":             "R&amp;D &lt;draft&gt;.md",
		"Map<String, List<Integer>>": "Map&lt;String, List&lt;Integer&gt;&gt;",
		"<!channel> look":            "&lt;!channel&gt; look",
		"<https://x.y|click>":        "&lt;https://x.y|click&gt;",
		"by <@U0USER1>, in <#C0CHAN1|general> & <#C0CHAN1>": "by <@U0USER1>, in <#C0CHAN1|general> &amp; <#C0CHAN1>",
		"&amp; stays literal":                               "&amp;amp; stays literal",
		"a -> b":                                            "a -&gt; b",
		"<@lower>":                                          "&lt;@lower&gt;",
	} {
		if got := EscapeText(in); got != want {
			t.Errorf("EscapeText(%q) = %q, want %q", in, got, want)
		}
	}
}
