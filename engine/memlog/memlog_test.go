package memlog

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// at is a clock reading in a zone other than UTC, to show that Stamp keeps
// t's location.
func at(hour, min int) time.Time {
	return time.Date(2026, 6, 7, hour, min, 59, 999, time.FixedZone("CEST", 2*3600))
}

func mustAppend(t *testing.T, data []byte, text, typ, by string, now time.Time) []byte {
	t.Helper()
	out, err := Append(data, text, typ, by, now)
	if err != nil {
		t.Fatalf("Append(%q): %v", text, err)
	}
	return out
}

func mustSet(t *testing.T, data []byte, key, value string, now time.Time) []byte {
	t.Helper()
	out, err := Set(data, key, value, now)
	if err != nil {
		t.Fatalf("Set(%q, %q): %v", key, value, err)
	}
	return out
}

func wantFile(t *testing.T, step string, got []byte, want string) {
	t.Helper()
	if string(got) != want {
		t.Fatalf("%s:\n got: %q\nwant: %q", step, got, want)
	}
}

// TestGolden walks the life of the memlog shown in the script's docstring.
func TestGolden(t *testing.T) {
	data := Init([]Field{
		{"topic", "Onboarding flow for a budgeting app"},
		{"goal", "lift week-1 retention"},
	}, at(14, 22))
	wantFile(t, "init", data, "---\n"+
		"topic: Onboarding flow for a budgeting app\n"+
		"goal: lift week-1 retention\n"+
		"updated: 2026-06-07T14:22\n"+
		"---\n\n\n")
	if n := Entries(data); n != 0 {
		t.Errorf("Entries(new) = %d, want 0", n)
	}

	data = mustAppend(t, data, "user picked techniques: SCAMPER, then Six Thinking Hats", "note", "", at(14, 23))
	wantFile(t, "first append", data, "---\n"+
		"topic: Onboarding flow for a budgeting app\n"+
		"goal: lift week-1 retention\n"+
		"updated: 2026-06-07T14:23\n"+
		"---\n\n"+
		"- (note) user picked techniques: SCAMPER, then Six Thinking Hats\n")

	data = mustAppend(t, data, "skip the signup wall: let people try with sample data first", "idea", "user", at(14, 24))
	data = mustAppend(t, data, "is open-banking consent too heavy for step one?", "", "coach", at(14, 25))
	data = mustAppend(t, data, "a plain note", "", "", at(14, 26))
	data = mustAppend(t, data, "  the \"scary numbers\" risk\n\tand the  \"real numbers\"\r\nidea   are one lever \n\n", "insight", "", at(14, 27))
	wantFile(t, "appends", data, "---\n"+
		"topic: Onboarding flow for a budgeting app\n"+
		"goal: lift week-1 retention\n"+
		"updated: 2026-06-07T14:27\n"+
		"---\n\n"+
		"- (note) user picked techniques: SCAMPER, then Six Thinking Hats\n"+
		"- (idea by user) skip the signup wall: let people try with sample data first\n"+
		"- (by coach) is open-banking consent too heavy for step one?\n"+
		"- a plain note\n"+
		"- (insight) the \"scary numbers\" risk and the \"real numbers\" idea are one lever\n")
	if n := Entries(data); n != 5 {
		t.Errorf("Entries = %d, want 5", n)
	}

	data = mustSet(t, data, "topic", "Onboarding flow", at(14, 28))
	data = mustSet(t, data, "owner", "ana", at(14, 29))
	data = mustAppend(t, data, "session complete", "event", "", at(14, 30))
	wantFile(t, "sets", data, "---\n"+
		"topic: Onboarding flow\n"+
		"goal: lift week-1 retention\n"+
		"owner: ana\n"+
		"updated: 2026-06-07T14:30\n"+
		"---\n\n"+
		"- (note) user picked techniques: SCAMPER, then Six Thinking Hats\n"+
		"- (idea by user) skip the signup wall: let people try with sample data first\n"+
		"- (by coach) is open-banking consent too heavy for step one?\n"+
		"- a plain note\n"+
		"- (insight) the \"scary numbers\" risk and the \"real numbers\" idea are one lever\n"+
		"- (event) session complete\n")
	if n := Entries(data); n != 6 {
		t.Errorf("Entries = %d, want 6", n)
	}
}

func TestInitFields(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields []Field
		fm     string
	}{
		{"none", nil, ""},
		{"repeated key keeps first place, last value", []Field{{"a", "1"}, {"b", "2"}, {"a", "3"}}, "a: 3\nb: 2\n"},
		{"updated given is restamped last", []Field{{"updated", "x"}, {"b", "2"}}, "b: 2\n"},
		{"trimmed", []Field{{" a\t", "  1 \u3000"}}, "a: 1\n"},
		{"line breaks become spaces", []Field{{"goal", "one\r\ntwo\n\nthree\u2028four"}}, "goal: one two  three four\n"},
		{"--- in a value", []Field{{"topic", "x\n---\ny"}, {"goal", "---"}}, "topic: x --- y\ngoal: ---\n"},
		{"colon in a value", []Field{{"topic", "a: b"}}, "topic: a: b\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Init(tc.fields, at(9, 5))
			wantFile(t, "init", got, "---\n"+tc.fm+"updated: 2026-06-07T09:05\n---\n\n\n")
		})
	}
}

func TestAppendTags(t *testing.T) {
	base := Init(nil, at(1, 0))
	for _, tc := range []struct{ text, typ, by, entry string }{
		{"x", "idea", "", "- (idea) x"},
		{"x", "idea", "user", "- (idea by user) x"},
		{"x", "", "coach", "- (by coach) x"},
		{"x", "", "", "- x"},
		{"", "", "", "- "},
		{" \t\n", "note", "", "- (note) "},
		{"x", " idea ", "user ", "- (idea  by user) x"},             // strip only when by is given
		{"x", "  ", "", "- (  ) x"},                                 // a blank type is still a tag
		{"x", "  ", " ", "- (by) x"},                                // "   by  ".strip() == "by"
		{"a\u00a0b\u3000c\x1fd\u200be", "", "", "- a b c d\u200be"}, // Python whitespace, not U+200B
		{"a\u2028b\u0085c\fd\ve", "", "", "- a b c d e"},
	} {
		got, err := Append(base, tc.text, tc.typ, tc.by, at(1, 1))
		if err != nil {
			t.Fatal(err)
		}
		body := string(got[strings.Index(string(got), "\n---\n\n")+6:])
		want := tc.entry + "\n"
		if body != want {
			t.Errorf("Append(%q, %q, %q) body = %q, want %q", tc.text, tc.typ, tc.by, body, want)
		}
	}
}

func TestSet(t *testing.T) {
	data := []byte("---\na: 1\nupdated: 2000-01-01T00:00\nb: 2\n---\n\n- x\n")
	got := mustSet(t, data, "b", "3", at(2, 0))
	wantFile(t, "existing", got, "---\na: 1\nb: 3\nupdated: 2026-06-07T02:00\n---\n\n- x\n")
	got = mustSet(t, data, "c", "  v\nw  ", at(2, 0))
	wantFile(t, "new, untrimmed", got, "---\na: 1\nb: 2\nc:   v w  \nupdated: 2026-06-07T02:00\n---\n\n- x\n")
	got = mustSet(t, data, "updated", "never", at(2, 0))
	wantFile(t, "updated", got, "---\na: 1\nb: 2\nupdated: 2026-06-07T02:00\n---\n\n- x\n")
	got = mustSet(t, data, "k:v", "1", at(2, 0))
	wantFile(t, "colon in key", got, "---\na: 1\nb: 2\nk:v: 1\nupdated: 2026-06-07T02:00\n---\n\n- x\n")
	// On the next write the key "k:v" reads back as "k" with value "v: 1".
	got = mustSet(t, got, "z", "", at(2, 1))
	wantFile(t, "colon re-read", got, "---\na: 1\nb: 2\nk: v: 1\nz: \nupdated: 2026-06-07T02:01\n---\n\n- x\n")
}

// TestParse covers split and render on content written by hand.
func TestParse(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"crlf", "---\r\ntopic: a\r\n---\r\n\r\n- one\r\n- two\r\n",
			"---\ntopic: a\nupdated: T\n---\n\n- one\n- two\n- new\n"},
		{"cr", "---\rtopic: a\r---\r- one\r",
			"---\ntopic: a\nupdated: T\n---\n\n- one\n- new\n"},
		{"no body", "---\n---", "---\nupdated: T\n---\n\n- new\n"},
		{"whitespace body dropped", "---\n---\n \n\t\n", "---\nupdated: T\n---\n\n- new\n"},
		{"inner blank lines kept, edges dropped", "---\n---\n\n\n- a\n\n \n- b\n\n\n",
			"---\nupdated: T\n---\n\n- a\n\n \n- b\n- new\n"},
		{"leading spaces kept", "---\n---\n  text\n", "---\nupdated: T\n---\n\n  text\n- new\n"},
		{"fm trimmed, no-colon lines dropped, dup keys", "---\n k : v \njunk\nupdated: old\nk: w\n : e\n---\n",
			"---\nk: w\n: e\nupdated: T\n---\n\n- new\n"},
		{"first exact --- closes", "---\ntopic: ---\n--- \n ---\n---\nbody\n---\nb: 2\n",
			"---\ntopic: ---\nupdated: T\n---\n\nbody\n---\nb: 2\n- new\n"},
		{"other line breaks", "---\x0ba: 1\x0c---\x1c- x\x1d- y\x1e- z\u0085- v\u2028- w\u2029",
			"---\na: 1\nupdated: T\n---\n\n- x\n- y\n- z\n- v\n- w\n- new\n"},
		{"nul and U+FEFF in body", "---\n---\n\x00\ufeff\n", "---\nupdated: T\n---\n\n\x00\ufeff\n- new\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Append([]byte(tc.in), "new", "", "", at(3, 4))
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(tc.want, "updated: T", "updated: 2026-06-07T03:04", 1)
			wantFile(t, "append", got, want)
		})
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"", ".memlog.md has no frontmatter"},
		{"\n---\n---\n", ".memlog.md has no frontmatter"},
		{"topic: x\n", ".memlog.md has no frontmatter"},
		{"--- \n---\n", ".memlog.md has no frontmatter"},
		{"\ufeff---\n---\n", ".memlog.md has no frontmatter"},
		{"---", ".memlog.md frontmatter is not terminated"},
		{"---\ntopic: x\n", ".memlog.md frontmatter is not terminated"},
		{"---\ntopic: ---\n--- \n ---\n----\n", ".memlog.md frontmatter is not terminated"},
		{"---\n---\n\xff\n", ".memlog.md is not valid UTF-8"},
	} {
		_, err := Append([]byte(tc.in), "x", "", "", at(0, 0))
		if err == nil || err.Error() != tc.err {
			t.Errorf("Append(%q) error = %v, want %q", tc.in, err, tc.err)
		}
		_, err = Set([]byte(tc.in), "k", "v", at(0, 0))
		if err == nil || err.Error() != tc.err {
			t.Errorf("Set(%q) error = %v, want %q", tc.in, err, tc.err)
		}
		if n := Entries([]byte(tc.in)); n != 0 {
			t.Errorf("Entries(%q) = %d, want 0", tc.in, n)
		}
	}
}

func TestEntries(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"---\n---\n", 0},
		{"---\n- fm: not counted\n---\n- a\n-b\n - c\n-\n- \n--- x\n- d", 3},
		{"---\n---\n- a\r\n- b\r- c\u2028- d", 4},
	} {
		if got := Entries([]byte(tc.in)); got != tc.want {
			t.Errorf("Entries(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseField(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Field
	}{
		{"topic=X", Field{"topic", "X"}},
		{" topic = a=b ", Field{"topic", "a=b"}},
		{"=", Field{"", ""}},
		{"goal=\x1fa: b\u3000", Field{"goal", "a: b"}},
	} {
		got, err := ParseField(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseField(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, repr string }{
		{"x", `'x'`},
		{"", `''`},
		{"it's", `"it's"`},
		{`it's "q"`, `'it\'s "q"'`},
		{"a\tb\nc\r\\", `'a\tb\nc\r\\'`},
		{"é😀\x7f\u0085\u00a0\u2028\U000E0001", `'é😀\x7f\x85\xa0\u2028\U000e0001'`},
		{"a\xffb", `'a\udcffb'`},
	} {
		_, err := ParseField(tc.in)
		want := "--field expects key=value, got " + tc.repr
		if err == nil || err.Error() != want {
			t.Errorf("ParseField(%q) error = %v, want %q", tc.in, err, want)
		}
	}
}

func TestStamp(t *testing.T) {
	if got := Stamp(at(7, 8)); got != "2026-06-07T07:08" {
		t.Errorf("Stamp = %q", got)
	}
	utc := at(1, 30).UTC() // 23:30 the day before
	if got := Stamp(utc); got != "2026-06-06T23:30" {
		t.Errorf("Stamp(UTC) = %q", got)
	}
}

func TestSplitLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"\n", []string{""}},
		{"a", []string{"a"}},
		{"a\n", []string{"a"}},
		{"a\n\n", []string{"a", ""}},
		{"a\r\nb\n\rc\r\r\n", []string{"a", "b", "", "c", ""}},
		{"a\x1fb\u2028", []string{"a\x1fb"}},
	} {
		if got := splitLines(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInvalidUTF8Arguments(t *testing.T) {
	data := Init([]Field{{"t\xff", "v\xfe"}}, at(0, 0))
	wantFile(t, "init", data, "---\nt\uFFFD: v\uFFFD\nupdated: 2026-06-07T00:00\n---\n\n\n")
	data = mustAppend(t, data, "a\xffb", "t\xc3", "", at(0, 0))
	data = mustSet(t, data, "k\x80", "\xe2\x82", at(0, 0))
	wantFile(t, "append, set", data,
		"---\nt\uFFFD: v\uFFFD\nk\uFFFD: \uFFFD\nupdated: 2026-06-07T00:00\n---\n\n- (t\uFFFD) a\uFFFDb\n")
}
