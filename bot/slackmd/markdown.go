package slackmd

import (
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"agentbot/engine/text"
)

// MaxPieceChars is the size, in characters (Unicode code points), of the
// pieces a long answer is split into, one message with one markdown block
// each. Slack caps a markdown block at 12,000 characters; we keep a margin.
const MaxPieceChars = 10_000

// MinPieceChars is the smallest piece size Split honours; smaller
// positive limits are raised to it so a re-opened code fence still fits.
const MinPieceChars = 32

// DefaultFallbackChars is the fallback length Fallback uses when n <= 0.
const DefaultFallbackChars = 150

// Block wraps one piece of Split in a Slack markdown block,
// the only block the bot renders answers with.
func Block(piece string) slack.Block {
	return slack.NewMarkdownBlock("", piece)
}

// Split splits text into pieces of at most limit characters
// (limit <= 0 means MaxPieceChars; limit < MinPieceChars means MinPieceChars).
//
// It cuts, in order of preference, at a block boundary (a blank line, or the
// edge of a heading, rule or code fence) outside lists, between list items,
// or at a line break. It cuts inside a ``` or ~~~ code fence only when the
// window holds no boundary outside one: the piece then ends with a closing
// fence and the next starts by re-opening it with the same opening line (its
// info string is dropped if the two lines would take half a piece), so every
// piece is valid markdown. A line longer than a whole piece is cut at a
// space, else between characters, never inside a UTF-8 sequence or between an
// emoji and its modifiers. A kind of boundary is passed over for a lower one
// when it would leave the piece under a fifth full.
//
// Blank lines at a cut are dropped, as are leading and trailing blank lines;
// nothing else is: removing the re-opened and added fence lines, the pieces
// appear in text in order, separated only by whitespace. Empty or blank text
// yields no pieces.
func Split(text string, limit int) []string {
	switch {
	case limit <= 0:
		limit = MaxPieceChars
	case limit < MinPieceChars:
		limit = MinPieceChars
	}
	spans := splitSpans(text, limit)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = sp.render(text)
	}
	return out
}

// span is one piece: text[start:end] with an optional re-opened fence line
// before it and a closing fence line after it.
type span struct {
	start, end int
	open       string // fence line to prepend, "" for none
	close      string // fence line to append, "" for none
}

func (sp span) render(text string) string {
	var b strings.Builder
	b.Grow(sp.end - sp.start + len(sp.open) + len(sp.close) + 2)
	if sp.open != "" {
		b.WriteString(sp.open)
		b.WriteByte('\n')
	}
	b.WriteString(text[sp.start:sp.end])
	if sp.close != "" {
		b.WriteByte('\n')
		b.WriteString(sp.close)
	}
	return b.String()
}

type lineKind uint8

const (
	lineText lineKind = iota
	lineBlank
	lineItem      // list item
	lineHeading   // ATX heading
	lineRule      // thematic break, or a setext underline
	lineFenceOpen // opening code fence
	lineFenceBody // inside a code fence
	lineFenceClose
)

type mdLine struct {
	start, end int // bytes of the line, without its '\n'
	runeStart  int // characters in text[:start]
	kind       lineKind
	fence      int  // index in fences for fence lines, else -1
	inList     bool // part of a list: item, continuation or nested block
}

type mdFence struct {
	open  string // the line that re-opens the fence in the next piece
	close string // the line that closes it at the end of a piece
}

// boundary classes, best first.
const (
	classBlock = iota
	classList
	classLine
	classFence     // between two lines inside a fence
	classFenceEdge // right after the opening or before the closing line
	classNone
)

// splitter holds the scanned text.
type splitter struct {
	text   string
	lines  []mdLine
	fences []mdFence
	max    int
}

func splitSpans(text string, limit int) []span {
	sp := &splitter{text: text, max: limit}
	sp.scan()
	return sp.split()
}

// scan breaks the text into lines and classifies them.
func (sp *splitter) scan() {
	text := sp.text
	runes := 0
	fenceIdx, fenceMarker := -1, ""
	inList := false
	for start := 0; start <= len(text); {
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += start
		}
		raw := text[start:end]
		ln := mdLine{start: start, end: end, runeStart: runes, fence: -1}
		switch {
		case fenceIdx >= 0 && isFenceClose(raw, fenceMarker):
			ln.kind, ln.fence, ln.inList = lineFenceClose, fenceIdx, inList
			fenceIdx = -1
		case fenceIdx >= 0:
			ln.kind, ln.fence, ln.inList = lineFenceBody, fenceIdx, inList
		default:
			ln.kind = classifyLine(raw)
			if ln.kind == lineFenceOpen {
				indent, marker, _ := fenceOpen(raw)
				fenceIdx, fenceMarker = len(sp.fences), marker
				sp.fences = append(sp.fences, sp.newFence(strings.TrimRightFunc(raw, unicode.IsSpace), indent, marker))
				ln.fence = fenceIdx
			}
			inList = listState(inList, ln.kind, raw, sp.lines)
			ln.inList = inList
		}
		sp.lines = append(sp.lines, ln)
		runes += utf8.RuneCountInString(raw) + 1
		start = end + 1
	}
	// A blank line belongs to a list only when the list goes on after it.
	for i := len(sp.lines) - 1; i >= 0; i-- {
		if sp.lines[i].kind == lineBlank && sp.lines[i].inList {
			sp.lines[i].inList = i+1 < len(sp.lines) && sp.lines[i+1].inList
		}
	}
}

// newFence builds the re-open and close lines of a fence, dropping the info
// string (and then the indentation) when they would eat half a piece.
func (sp *splitter) newFence(openLine, indent, marker string) mdFence {
	f := mdFence{open: openLine, close: indent + marker}
	over := func() bool {
		return utf8.RuneCountInString(f.open)+utf8.RuneCountInString(f.close)+2 > sp.max/2
	}
	if over() {
		f.open = indent + marker
	}
	if over() {
		f.open, f.close = marker, marker
	}
	return f
}

// listState says whether a line outside fences continues (or starts) a list.
func listState(inList bool, kind lineKind, raw string, prev []mdLine) bool {
	switch kind {
	case lineItem:
		return true
	case lineBlank:
		return inList // settled after the scan
	case lineHeading, lineRule:
		return false
	}
	if !inList {
		return false
	}
	if raw != "" && (raw[0] == ' ' || raw[0] == '\t') {
		return true // indented continuation or nested block
	}
	// A lazy continuation line directly under an item's text; an unindented
	// fence ends the list.
	return kind == lineText && len(prev) > 0 && prev[len(prev)-1].kind != lineBlank
}

var (
	reItem    = regexp.MustCompile(`^\s*([-*+]|\d{1,9}[.)])(\s|$)`)
	reHeading = regexp.MustCompile(`^ {0,3}#{1,6}(\s|$)`)
)

func classifyLine(raw string) lineKind {
	trimmed := strings.TrimSpace(raw)
	switch {
	case trimmed == "":
		return lineBlank
	case isRule(trimmed):
		return lineRule
	case reHeading.MatchString(raw):
		return lineHeading
	}
	if _, _, ok := fenceOpen(raw); ok {
		return lineFenceOpen
	}
	if reItem.MatchString(raw) {
		return lineItem
	}
	return lineText
}

// isRule reports a thematic break (---, ***, ___) or setext underline (===).
func isRule(trimmed string) bool {
	c := trimmed[0]
	if c != '-' && c != '*' && c != '_' && c != '=' {
		return false
	}
	n := 0
	for _, r := range trimmed {
		switch {
		case r == rune(c):
			n++
		case r == ' ' || r == '\t':
		default:
			return false
		}
	}
	return n >= 3
}

// fenceOpen parses an opening code fence: any indentation, then three or
// more backticks or tildes; a backtick fence's info string has no backtick.
func fenceOpen(raw string) (indent, marker string, ok bool) {
	body := strings.TrimLeft(raw, " \t")
	indent = raw[:len(raw)-len(body)]
	if body == "" || (body[0] != '`' && body[0] != '~') {
		return "", "", false
	}
	n := 0
	for n < len(body) && body[n] == body[0] {
		n++
	}
	if n < 3 || (body[0] == '`' && strings.ContainsRune(body[n:], '`')) {
		return "", "", false
	}
	return indent, body[:n], true
}

// isFenceClose reports a line closing a fence opened with marker.
func isFenceClose(raw, marker string) bool {
	t := strings.TrimSpace(raw)
	return len(t) >= len(marker) && strings.Trim(t, marker[:1]) == ""
}

// classBefore classifies the cut before line i; p is the last non-blank line
// before it (-1 for none).
func (sp *splitter) classBefore(i, p int) int {
	cur := sp.lines[i]
	if p < 0 || cur.kind == lineBlank {
		return classNone
	}
	if cur.kind == lineFenceBody || cur.kind == lineFenceClose {
		return fenceCutClass(sp.lines[i-1], cur)
	}
	last := sp.lines[p]
	gap := p < i-1
	inList := last.inList && cur.inList && cur.kind != lineHeading
	switch {
	case cur.kind == lineRule && !gap:
		return classLine // may be a setext underline: keep it with its text
	case atBlockEdge(last, cur, gap):
		if inList {
			return classList
		}
		return classBlock
	case inList && cur.kind == lineItem:
		return classList
	default:
		return classLine
	}
}

// fenceCutClass classifies the cut between prev and cur, a line inside a
// fence or its closing line: right after the opening line or before the
// closing one is the fence's edge, anything else a cut inside it.
func fenceCutClass(prev, cur mdLine) int {
	if prev.kind == lineFenceOpen || cur.kind == lineFenceClose {
		return classFenceEdge
	}
	return classFence
}

// atBlockEdge reports whether the cut between last, the last non-blank line,
// and cur, outside fences, is at the edge of a block: before a fence or a
// heading, after a fence or a rule, or at blank lines (gap).
func atBlockEdge(last, cur mdLine, gap bool) bool {
	return cur.kind == lineFenceOpen || last.kind == lineFenceClose || cur.kind == lineHeading ||
		last.kind == lineRule || gap
}

// runeAt returns the characters in text[:off].
func (sp *splitter) runeAt(off int) int {
	i := sort.Search(len(sp.lines), func(i int) bool { return sp.lines[i].start > off }) - 1
	ln := sp.lines[i]
	return ln.runeStart + utf8.RuneCountInString(sp.text[ln.start:off])
}

// lastContent returns the end of the last non-blank line, the end of the
// text's content.
func (sp *splitter) lastContent() (end int, ok bool) {
	for i := len(sp.lines) - 1; i >= 0; i-- {
		if sp.lines[i].kind != lineBlank {
			return sp.lines[i].end, true
		}
	}
	return 0, false
}

type candidate struct {
	line  int // cut before this line
	end   int // piece content ends here
	runes int
	class int
}

func (sp *splitter) split() []span {
	textEnd, ok := sp.lastContent()
	if !ok {
		return nil
	}
	var spans []span
	li, pos, open := 0, 0, ""
	for pos < textEnd {
		// Start at content: past a line's end, and past blank lines between blocks.
		for pos == sp.lines[li].end && li+1 < len(sp.lines) {
			li++
			pos = sp.lines[li].start
		}
		for open == "" && sp.lines[li].kind == lineBlank {
			li++
			pos = sp.lines[li].start
		}
		budget := sp.max
		if open != "" {
			budget -= utf8.RuneCountInString(open) + 1
		}
		startRunes := sp.runeAt(pos)
		if sp.runeAt(textEnd)-startRunes <= budget {
			spans = append(spans, span{start: pos, end: textEnd, open: open})
			break
		}
		c, found := sp.choose(li, pos, startRunes, budget)
		if !found {
			// The line at pos alone is too long: cut inside it.
			var s span
			s, pos = sp.hardCut(li, pos, budget, open)
			spans = append(spans, s)
			open = ""
			if s.close != "" {
				open = sp.fences[sp.lines[li].fence].open
			}
			continue
		}
		s := span{start: pos, end: c.end, open: open}
		open = ""
		if c.class >= classFence {
			f := sp.fences[sp.lines[c.line].fence]
			s.close, open = f.close, f.open
		}
		spans = append(spans, s)
		li, pos = c.line, sp.lines[c.line].start
	}
	return spans
}

// choose picks where the piece starting at pos (in line li, not blank) ends:
// the furthest cut of the best class that fills a fifth of the piece, else
// the furthest of the best class there is. Cuts inside fences come last.
func (sp *splitter) choose(li, pos, startRunes, budget int) (candidate, bool) {
	var best [classNone]*candidate
	p := li // last non-blank line of the piece so far
	for i := li + 1; i < len(sp.lines); i++ {
		class := sp.classBefore(i, p)
		end := sp.lines[p].end // blank lines at a cut are dropped
		n := sp.runeAt(end) - startRunes
		if n > budget {
			break // ends only grow from here
		}
		if class != classNone && end > pos {
			if class >= classFence {
				n += 1 + utf8.RuneCountInString(sp.fences[sp.lines[i].fence].close)
			}
			if n <= budget {
				best[class] = &candidate{line: i, end: end, runes: n, class: class}
			}
		}
		if sp.lines[i].kind != lineBlank {
			p = i
		}
	}
	minFill := budget / 5
	for class := classBlock; class <= classLine; class++ {
		if best[class] != nil && best[class].runes >= minFill {
			return *best[class], true
		}
	}
	for class := classBlock; class < classNone; class++ {
		if best[class] != nil {
			return *best[class], true
		}
	}
	return candidate{}, false
}

// hardCut splits line li, too long for the piece starting at pos, and
// returns the piece and where the next one starts. Inside a fence (or in an
// over-long opening fence line) the piece closes the fence and nothing is
// dropped; elsewhere it prefers a space in the second half of the window and
// drops the spaces at the cut.
func (sp *splitter) hardCut(li, pos, budget int, open string) (span, int) {
	ln := sp.lines[li]
	inFence := ln.kind == lineFenceBody || ln.kind == lineFenceOpen
	s := span{start: pos, open: open}
	allowed := budget
	if inFence {
		s.close = sp.fences[ln.fence].close
		allowed -= 1 + utf8.RuneCountInString(s.close)
	}
	rest := sp.text[pos:ln.end]
	cut := safeCut(rest, max(allowed, 1))
	if cut == 0 {
		cut = runeCut(rest, max(allowed, 1)) // one cluster longer than a piece
	}
	if ln.kind == lineFenceOpen && pos == ln.start {
		indent, marker, _ := fenceOpen(rest)
		cut = max(cut, len(indent)+len(marker)) // keep the opening marker whole
	}
	if !inFence {
		if i := strings.LastIndexAny(rest[:cut], " \t"); i > 0 && utf8.RuneCountInString(rest[:i]) >= allowed/2 {
			if e := len(strings.TrimRight(rest[:i], " \t")); e > 0 {
				next := i
				for next < len(rest) && (rest[next] == ' ' || rest[next] == '\t') {
					next++
				}
				s.end = pos + e
				return s, pos + next
			}
		}
	}
	s.end = pos + cut
	return s, pos + cut
}

// safeCut returns the byte length of the longest prefix of s with at most n
// characters that does not split a grapheme cluster (text.Prefix): a
// character from its combining marks, joiners, variation selectors or
// emoji modifiers, or a flag's pair of regional indicators. It returns 0
// when the first cluster is longer than n characters.
func safeCut(s string, n int) int { return text.Prefix(s, n) }

// runeCut returns the byte length of the first n characters of s.
func runeCut(s string, n int) int {
	cut := 0
	for i := 0; i < n && cut < len(s); i++ {
		_, w := utf8.DecodeRuneInString(s[cut:])
		cut += w
	}
	return cut
}

var (
	reImage      = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	reLink       = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	reRefLink    = regexp.MustCompile(`\[([^\]]+)\]\[[^\]]*\]`)
	reSlackLink  = regexp.MustCompile(`<((?:https?|mailto):[^|>\s]+)\|([^>]+)>`)
	reAutoLink   = regexp.MustCompile(`<((?:https?|mailto):[^>\s]+)>`)
	reStrong     = regexp.MustCompile(`(\*\*|__|~~)(\S(?:.*?\S)?)(\*\*|__|~~)`)
	reEmphasis   = regexp.MustCompile(`(^|[\s(])[*_](\S(?:[^*_]*\S)?)[*_]([\s).,;:!?]|$)`)
	reBlockStart = regexp.MustCompile(`^\s*(>\s?)*\s*(#{1,6}\s+|[-*+]\s+(\[[ xX]\]\s+)?|\d{1,9}[.)]\s+)?`)
	reTableRule  = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)+\|?\s*$|^\s*\|\s*:?-+:?\s*\|\s*$`)
)

// Fallback returns a short plain-text version of markdown text for
// notifications: code fence lines, heading, quote and list markers, emphasis
// and code markers are dropped, links become their text, whitespace is
// collapsed, and the result is cut to at most n characters (n <= 0 means
// DefaultFallbackChars), ending in "…" when shortened. The result is not
// escaped for Slack's text field.
func Fallback(text string, n int) string {
	if n <= 0 {
		n = DefaultFallbackChars
	}
	var words []string
	marker := ""
	for raw := range strings.Lines(text) {
		line := strings.TrimRight(raw, "\r\n")
		if marker != "" {
			if isFenceClose(line, marker) {
				marker = ""
				continue
			}
			words = append(words, strings.Fields(line)...)
			continue
		}
		if _, m, ok := fenceOpen(line); ok {
			marker = m
			continue
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || isRule(trimmed) || reTableRule.MatchString(line) {
			continue
		}
		line = reBlockStart.ReplaceAllString(line, "")
		if strings.HasPrefix(trimmed, "|") {
			line = strings.ReplaceAll(line, "|", " ")
		}
		words = append(words, strings.Fields(plainInline(line))...)
	}
	out := strings.Join(words, " ")
	if utf8.RuneCountInString(out) <= n {
		return out
	}
	if n == 1 {
		return "…"
	}
	cut := safeCut(out, n-1)
	if out[cut] != ' ' { // mid-word: back up to a space near the end
		if sp := strings.LastIndexByte(out[:cut], ' '); sp > 0 && utf8.RuneCountInString(out[:sp]) >= (n-1)*4/5 {
			cut = sp
		}
	}
	return strings.TrimRight(out[:cut], " ") + "…"
}

// plainInline removes inline markdown from one line.
func plainInline(s string) string {
	s = reImage.ReplaceAllString(s, "$1")
	s = reLink.ReplaceAllString(s, "$1")
	s = reRefLink.ReplaceAllString(s, "$1")
	s = reSlackLink.ReplaceAllString(s, "$2")
	s = reAutoLink.ReplaceAllString(s, "$1")
	for range 2 { // nested: ***bold italic***
		s = reStrong.ReplaceAllString(s, "$2")
		s = reEmphasis.ReplaceAllString(s, "$1$2$3")
	}
	return strings.ReplaceAll(s, "`", "")
}

// Shorten cuts s to at most n characters, ending in "…" when it cut,
// without splitting a grapheme cluster.
func Shorten(s string, n int) string { return text.Cut(s, n, "…") }

// mentionToken is Slack markup EscapeText keeps: a user mention (<@U…>,
// <@W…>) or a channel mention (<#C…>, <#C…|name>; <#G…> for a private
// channel made before 2021), which notify nobody
// beyond the person or channel named.
var mentionToken = regexp.MustCompile(`^<(?:@[UW][A-Z0-9]+|#[CG][A-Z0-9]+(?:\|[^<>|]*)?)>`)

// EscapeText escapes text for Slack's mrkdwn and message text fields: &, <
// and > become &amp;, &lt; and &gt;, as Slack treats them as control
// characters (https://docs.slack.dev/messaging/formatting-message-text#escaping).
// User and channel mentions stay markup; anything else, <!channel> and
// links included, becomes literal text.
func EscapeText(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&':
			b.WriteString("&amp;")
		case '<':
			if tok := mentionToken.FindString(s[i:]); tok != "" {
				b.WriteString(tok)
				i += len(tok) - 1
				continue
			}
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
