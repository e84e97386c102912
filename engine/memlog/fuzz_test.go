package memlog

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// hasLineBreak reports whether s holds a character Python's splitlines
// breaks at. The list is written out again here, from the Python docs, rather
// than taken from the implementation.
func hasLineBreak(s string) bool {
	return strings.ContainsAny(s, "\n\r\v\f\x1c\x1d\x1e\u0085\u2028\u2029")
}

// FuzzAppend feeds arbitrary content and arguments to Append and Set. They
// must not panic; what they write must parse again, and Append's entry must
// be the last line.
func FuzzAppend(f *testing.F) {
	f.Add([]byte("---\ntopic: x\nupdated: 2026-06-07T14:22\n---\n\n- (idea) one\n"), "two\tthree", "idea", "user", "goal", "g")
	f.Add([]byte("---\r\n---\r\n\r\n- a\r"), " \u2028 ", "", "coach", "k:v", "---")
	f.Add([]byte("---\n k : v \njunk\n---\nbody\n---\n"), "", "  ", "", "", "\n---\n")
	f.Add([]byte("---\x0b---\x1c- x\u0085"), "a\x1fb", "t\nu", "", "k\n---", "v")
	f.Add([]byte("no frontmatter"), "x", "", "", "k", "v")
	f.Add([]byte("---\ntopic: x\n"), "x", "", "", "k", "v")
	f.Fuzz(func(t *testing.T, data []byte, text, typ, by, key, value string) {
		now := at(12, 0)
		before := Entries(data) // must not panic either
		out, err := Append(data, text, typ, by, now)
		if err != nil {
			if before != 0 {
				t.Fatalf("Append failed (%v) on content with %d entries", err, before)
			}
			if _, serr := Set(data, key, value, now); serr == nil || serr.Error() != err.Error() {
				t.Fatalf("Append failed with %v, Set with %v", err, serr)
			}
			return
		}
		if !utf8.Valid(out) || !bytes.HasSuffix(out, []byte("\n")) || !bytes.HasPrefix(out, []byte("---\n")) {
			t.Fatalf("Append wrote %q", out)
		}
		if !hasLineBreak(typ) && !hasLineBreak(by) {
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "- ") || hasLineBreak(last) {
				t.Fatalf("last line %q is not an entry", last)
			}
			// Text collapses to its whitespace-free words, so the entry ends with
			// them, one space apart.
			if words := strings.Fields(text); len(words) > 0 && !strings.HasSuffix(last, words[len(words)-1]) &&
				utf8.ValidString(text) && !strings.ContainsAny(text, "\x1c\x1d\x1e\x1f") {
				t.Fatalf("last line %q does not end with the text's last word %q", last, words[len(words)-1])
			}
			if got := Entries(out); got != before+1 {
				t.Fatalf("Entries went from %d to %d", before, got)
			}
			// Append is append-only: a second one keeps the file as a prefix.
			again, err := Append(out, "second", "", "", now)
			if err != nil {
				t.Fatalf("second Append: %v", err)
			}
			if want := string(out) + "- second\n"; string(again) != want {
				t.Fatalf("second Append rewrote the file:\n got %q\nwant %q", again, want)
			}
		} else {
			if _, err := Append(out, "second", "", "", now); err != nil {
				t.Fatalf("second Append: %v", err)
			}
			_ = Entries(out)
		}

		set, err := Set(data, key, value, now)
		if err != nil {
			t.Fatalf("Append succeeded, Set failed: %v", err)
		}
		if !hasLineBreak(key) {
			if got := Entries(set); got != before {
				t.Fatalf("Set changed Entries from %d to %d", before, got)
			}
		}
		again, err := Append(set, "second", "", "", now)
		if err != nil {
			t.Fatalf("Append after Set: %v", err)
		}
		if !bytes.HasSuffix(again, []byte("\n- second\n")) {
			t.Fatalf("Append after Set does not end with the entry: %q", again)
		}
	})
}
