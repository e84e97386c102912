package party

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Speaker is who a piece of a party's answer is by: a persona, or, zero,
// the orchestrator (staging and connective lines).
type Speaker struct {
	Icon, Name, Title string
}

// Persona reports whether sp is a persona rather than the orchestrator.
func (sp Speaker) Persona() bool { return sp.Name != "" }

// Label is "📊 Mary, Business Analyst" (as much as is known).
func (sp Speaker) Label() string {
	l := strings.TrimSpace(sp.Icon + " " + sp.Name)
	if sp.Title != "" && sp.Title != sp.Name {
		l += ", " + sp.Title
	}
	return l
}

// Piece is answer text by one speaker. Start marks the first piece of a
// new turn; a turn's header line ("📊 **Mary:**") is not in its text.
type Piece struct {
	Speaker Speaker
	Text    string
	Start   bool
}

// header is a turn's first line: "{icon} **{name}:**" (also "**{name}**:"),
// the icon optional only for a member of the roster.
var header = regexp.MustCompile(`^[ \t]*(?:(\S{1,16})[ \t]+)?\*\*([^*\n]{1,60}?)(?::\*\*|\*\*:)[ \t]*`)

// maxHeader is how long a line's start is held back while it may still
// become a header.
const maxHeader = 100

// Splitter splits a party's answer, as it streams, into the turns of its
// personas. Text before the first turn is the orchestrator's. The zero
// Splitter knows no roster: a turn then needs an icon before the name.
type Splitter struct {
	Roster  []Member
	cur     Speaker
	line    strings.Builder // the current line's start, held back
	decided bool            // the current line is known not to be a header
}

// Write takes a delta of the answer and returns the pieces it completes;
// the start of a line that may still become a header is held back.
func (s *Splitter) Write(delta string) []Piece {
	var out []Piece
	for delta != "" {
		i := strings.IndexByte(delta, '\n')
		part := delta
		if i >= 0 {
			part = delta[:i+1]
		}
		delta = delta[len(part):]
		if s.decided {
			out = s.add(out, Piece{Speaker: s.cur, Text: part})
		} else {
			s.line.WriteString(part)
			out = s.decide(out, i >= 0)
		}
		if i >= 0 {
			s.decided = false
		}
	}
	return out
}

// Flush returns what is held back, at the end of the answer.
func (s *Splitter) Flush() []Piece {
	out := s.decide(nil, true)
	s.decided = false
	return out
}

// decide settles the held-back line start when it is a whole line or can
// no longer be a header's start.
func (s *Splitter) decide(out []Piece, whole bool) []Piece {
	l := s.line.String()
	if l == "" {
		return out
	}
	if m := header.FindStringSubmatch(l); m != nil {
		if sp, ok := s.speaker(m[1], m[2]); ok {
			s.line.Reset()
			s.cur, s.decided = sp, true
			return s.add(out, Piece{Speaker: sp, Text: l[len(m[0]):], Start: true})
		}
	}
	if !whole && mayBecomeHeader(l) {
		return out
	}
	s.line.Reset()
	s.decided = true
	return s.add(out, Piece{Speaker: s.cur, Text: l})
}

// add appends p unless it is empty and starts nothing.
func (s *Splitter) add(out []Piece, p Piece) []Piece {
	if p.Text == "" && !p.Start {
		return out
	}
	return append(out, p)
}

// mayBecomeHeader reports whether a line's start can still turn into a
// header as more text arrives.
func mayBecomeHeader(l string) bool {
	t := strings.TrimLeft(l, " \t")
	if len(l) > maxHeader || strings.Contains(t, ":**") || strings.Contains(t, "**:") {
		return false
	}
	if strings.HasPrefix(t, "*") {
		return true
	}
	r, _ := utf8.DecodeRuneInString(t)
	return t == "" || (!unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '>' && r != '#' && r != '|')
}

// speaker returns the persona a header names: the roster's member of that
// name, or, with an icon, a walk-on under the icon and name given.
func (s *Splitter) speaker(icon, name string) (Speaker, bool) {
	name = strings.TrimSpace(name)
	if icon != "" {
		r, _ := utf8.DecodeRuneInString(icon)
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r < 0x80 {
			return Speaker{}, false // a word, not an icon: "Note **this:**"
		}
	}
	for _, m := range s.Roster {
		if strings.EqualFold(m.Name, name) {
			sp := Speaker{Icon: m.Icon, Name: m.Name, Title: m.Title}
			if icon != "" {
				sp.Icon = icon
			}
			return sp, true
		}
	}
	if icon == "" {
		return Speaker{}, false
	}
	return Speaker{Icon: icon, Name: name}, true
}

// Turn is one speaker's whole turn of an answer.
type Turn struct {
	Speaker Speaker
	Text    string
}

// Split splits a whole answer into its turns (Splitter over the whole
// text): the orchestrator's lines before the first persona, then each
// persona's turn, each text trimmed; empty turns are dropped.
func Split(text string, roster []Member) []Turn {
	s := &Splitter{Roster: roster}
	var turns []Turn
	for _, p := range append(s.Write(text), s.Flush()...) {
		if p.Start || len(turns) == 0 {
			turns = append(turns, Turn{Speaker: p.Speaker})
		}
		turns[len(turns)-1].Text += p.Text
	}
	out := turns[:0]
	for _, t := range turns {
		t.Text = strings.TrimSpace(t.Text)
		if t.Text != "" || t.Speaker.Persona() {
			out = append(out, t)
		}
	}
	return out
}
