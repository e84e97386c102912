package vars

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name, in string
		want     Vars
	}{
		{"flat with comments", `
# module config
user_name: Ada   # who
output_folder: "{project-root}/docs"
communication_language: English
`, Vars{"user_name": "Ada", "output_folder": "{project-root}/docs", "communication_language": "English"}},
		{"scalars keep their text", "flag: false\nnum: 1.50\nnull_v:\ntilde: ~\nquoted: 'true'\n",
			Vars{"flag": "false", "num": "1.50", "null_v": "", "tilde": "", "quoted": "true"}},
		{"nested flattened, lists skipped", "a:\n  b: x\n  c:\n    d: y\nlist: [1, 2]\nafter: z\n",
			Vars{"a.b": "x", "a.c.d": "y", "after": "z"}},
		{"scalar alias followed, mapping alias skipped", "base: &b /x\nm: &m {k: v}\ncopy: *b\nm2: *m\n",
			Vars{"base": "/x", "m.k": "v", "copy": "/x"}},
		{"merge key skipped", "m: &m {k: v}\nn:\n  <<: *m\n  own: o\n", Vars{"m.k": "v", "n.own": "o"}},
		{"block scalar", "text: |\n  line one\n  line two\n", Vars{"text": "line one\nline two\n"}},
		{"empty file", "", Vars{}},
		{"only comments", "# nothing here\n", Vars{}},
		{"null document", "~\n", Vars{}},
		{"first document only", "a: 1\n---\nb: 2\n", Vars{"a": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseConfig = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // substrings of the error
	}{
		{"bad indentation", "a: 1\n  b: 2\n", []string{"parse config", "line 2"}},
		{"unclosed quote", "a: \"open\nb: 2\n", []string{"parse config", "line"}},
		{"tab indentation", "a:\n\tb: 1\n", []string{"parse config", "line"}},
		{"top level list", "- a\n- b\n", []string{"parse config", "line 1", "a list", "mapping"}},
		{"top level scalar", "just text\n", []string{"parse config", "a single value"}},
		{"duplicate key", "user_name: a\nx: 1\nuser_name: b\n", []string{"line 3", `"user_name"`, "line 1"}},
		{"duplicate flattened key", "a.b: 1\na:\n  b: 2\n", []string{`"a.b"`, "already defined"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tt.in))
			if err == nil {
				t.Fatalf("ParseConfig = %v, want an error", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
