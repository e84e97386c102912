// Package memlog reproduces, byte for byte, the file format of BMAD's
// append-only memory log, _bmad/scripts/memlog.py (BMAD v6.12.0), for a bot
// that has no shell to run the script with.
//
// A memlog is a Markdown file with a flat "key: value" frontmatter, whose
// "updated" field is always last, and a body of one-line entries appended at
// the end:
//
//	---
//	topic: Onboarding flow
//	updated: 2026-06-07T14:22
//	---
//
//	- (idea by user) skip the signup wall
//
// The package is pure: its functions transform the file's content, and the
// caller reads and (atomically) writes the file and supplies the clock.
//
// Deviations from the script, all at the edges of what it accepts:
//   - Existing content that is not valid UTF-8 is an error here; the script
//     fails with a UnicodeDecodeError.
//   - Arguments (fields, text, type, by, key, value) that are not valid UTF-8
//     have each invalid byte replaced by U+FFFD; the script would fail to
//     write such (surrogate-escaped) arguments.
//   - Entries returns 0 for content the script cannot parse; the script has
//     no count to give there.
//
// Everything else follows the script, including its quirks: a key given to
// Set is written untrimmed, a Set value is untrimmed (its line breaks become
// spaces), a line break in a type or by tag is written as is, and lines of
// the frontmatter without ":" are dropped.
package memlog

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// FileName is the memlog's name inside a run folder: {workspace}/.memlog.md.
const FileName = ".memlog.md"

// updatedKey is the frontmatter field stamped on every write and kept last.
const updatedKey = "updated"

// The errors split reports, worded as the script's ValueErrors.
var (
	errNoFrontmatter = errors.New(FileName + " has no frontmatter")
	errUnterminated  = errors.New(FileName + " frontmatter is not terminated")
	errNotUTF8       = errors.New(FileName + " is not valid UTF-8")
)

// Field is one frontmatter field.
type Field struct{ Key, Value string }

// ParseField parses "k=v" as the script's --field does: it splits at the
// first "=" and trims both sides of Python whitespace. Without "=" it
// returns the script's error, "--field expects key=value, got 'x'", with the
// argument quoted as Python's repr would.
func ParseField(s string) (Field, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return Field{}, fmt.Errorf("--field expects key=value, got %s", pyRepr(s))
	}
	return Field{Key: pyStrip(k), Value: pyStrip(v)}, nil
}

// Init returns the content of a new memlog with the fields in order (a
// repeated key keeps its first position and takes the last value, as a
// Python dict does), then "updated" stamped last. Keys and values are
// trimmed as the script's --field trims them (a no-op after ParseField).
func Init(fields []Field, now time.Time) []byte {
	m := newMeta()
	for _, f := range fields {
		m.set(pyStrip(valid(f.Key)), pyStrip(valid(f.Value)))
	}
	touch(m, now)
	return render(m, "")
}

// Append adds one entry at the end: text whitespace-collapsed (Python
// " ".join(text.split())), tag "(type) ", "(type by who) ", "(by who) " or
// none; updated restamped and kept last.
func Append(data []byte, text, typ, by string, now time.Time) ([]byte, error) {
	m, body, err := split(data)
	if err != nil {
		return nil, err
	}
	text = strings.Join(pySplit(valid(text)), " ")
	label := valid(typ)
	if by != "" {
		label = pyStrip(label + " by " + valid(by))
	}
	tag := ""
	if label != "" {
		tag = "(" + label + ") "
	}
	entry := "- " + tag + text
	if pyStrip(body) != "" {
		body = strings.TrimRight(body, "\n") + "\n" + entry
	} else {
		body = entry
	}
	touch(m, now)
	return render(m, body), nil
}

// Set sets or replaces a frontmatter field (an existing key keeps its
// position); updated restamped and kept last. Like the script, it writes key
// and value untrimmed.
func Set(data []byte, key, value string, now time.Time) ([]byte, error) {
	m, body, err := split(data)
	if err != nil {
		return nil, err
	}
	m.set(valid(key), valid(value))
	touch(m, now)
	return render(m, body), nil
}

// Entries counts entries: body lines starting with "- ". It returns 0 for
// content without a well-formed frontmatter.
func Entries(data []byte) int {
	_, body, err := split(data)
	if err != nil {
		return 0
	}
	return entryCount(body)
}

// Stamp is the "updated" value for t: "2006-01-02T15:04" in t's location.
func Stamp(t time.Time) string {
	return t.Format("2006-01-02T15:04")
}

// meta is the frontmatter as a Python dict: keys in insertion order.
type meta struct {
	keys []string
	vals map[string]string
}

func newMeta() *meta { return &meta{vals: map[string]string{}} }

// set is meta[k] = v: a new key goes last, an existing one keeps its place.
func (m *meta) set(k, v string) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

// pop is meta.pop(k, None).
func (m *meta) pop(k string) {
	if _, ok := m.vals[k]; !ok {
		return
	}
	delete(m.vals, k)
	for i, key := range m.keys {
		if key == k {
			m.keys = append(m.keys[:i], m.keys[i+1:]...)
			return
		}
	}
}

// split is the script's split: the frontmatter in source order and the body.
// The closing fence is the first line that is exactly "---". The script reads
// the file with universal newlines ("\r\n" and "\r" become "\n"); splitLines
// breaks at those already, so the lines are the same.
func split(data []byte) (*meta, string, error) {
	if !utf8.Valid(data) {
		return nil, "", errNotUTF8
	}
	lines := splitLines(string(data))
	if len(lines) == 0 || lines[0] != "---" {
		return nil, "", errNoFrontmatter
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if lines[i] == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, "", errUnterminated
	}
	m := newMeta()
	for _, line := range lines[1:end] {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m.set(pyStrip(k), pyStrip(v))
		}
	}
	return m, strings.TrimLeft(strings.Join(lines[end+1:], "\n"), "\n"), nil
}

// render is the script's render; line breaks in values become spaces.
func render(m *meta, body string) []byte {
	var b strings.Builder
	b.WriteString("---\n")
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(strings.Join(splitLines(m.vals[k]), " "))
	}
	b.WriteString("\n---\n\n")
	b.WriteString(strings.TrimRight(body, "\n"))
	b.WriteByte('\n')
	return []byte(b.String())
}

// touch stamps updated and keeps it last.
func touch(m *meta, now time.Time) {
	m.pop(updatedKey)
	m.set(updatedKey, Stamp(now))
}

// entryCount is the script's entry_count.
func entryCount(body string) int {
	n := 0
	for _, ln := range splitLines(body) {
		if strings.HasPrefix(ln, "- ") {
			n++
		}
	}
	return n
}

// valid replaces each invalid UTF-8 byte of an argument by U+FFFD.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
