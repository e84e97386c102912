package vars

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// session is a typical set of session variables.
var session = Vars{
	"project-root":   "/project",
	"bundle-root":    "/project/bmad",
	"core-root":      "/core",
	"output_folder":  "/outputs",
	"installed_path": "{bundle-root}/bmm/workflows/x",
	"user_name":      "Ada",
	"date":           "2026-01-02",
	"empty":          "",
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name, in string
		v        Vars
		want     string
	}{
		{"no variables", "plain/path.md", session, "plain/path.md"},
		{"empty", "", session, ""},
		{"one", "{project-root}/x", session, "/project/x"},
		{"several", "{core-root}/tasks/{user_name}-{date}.md", session, "/core/tasks/Ada-2026-01-02.md"},
		{"name with dash dot digit", "{a-b.c_1}", Vars{"a-b.c_1": "ok"}, "ok"},
		{"recursive value", "{installed_path}/instructions.md", session, "/project/bmad/bmm/workflows/x/instructions.md"},
		{"config style value", "{output_folder}", Vars{"output_folder": "{project-root}/docs", "project-root": "/p"}, "/p/docs"},
		{"result not rescanned", "{a}", Vars{"a": "{{b}}", "b": "no"}, "{{b}}"},
		{"double kept", "{{project_name}}", session, "{{project_name}}"},
		{"double inside text", "{output_folder}/brief-{{project_name}}-{{date}}.md", session, "/outputs/brief-{{project_name}}-{{date}}.md"},
		{"double with spaces", "x {{ a b }} y", nil, "x {{ a b }} y"},
		{"triple braces", "{{{user_name}}}", session, "{{Ada}}"},
		{"unclosed double", "{{user_name}", session, "{{user_name}"},
		{"empty braces", "{}", nil, "{}"},
		{"spaces not a name", "{a b}", nil, "{a b}"},
		{"slash not a name", "{path/to/file.md}", nil, "{path/to/file.md}"},
		{"lone braces", "a { b } c {", nil, "a { b } c {"},
		{"unterminated", "{user_name", session, "{user_name"},
		{"trailing brace", "{user_name}}", session, "Ada}"},
		{"json-ish", `{"a": 1}`, nil, `{"a": 1}`},
		{"empty value", "[{empty}]", session, "[]"},
		{"shared reference", "{a}", Vars{"a": "{b}{b}{b}", "b": "{c}{c}", "c": "x"}, "xxxxxx"},
		{"fallback first", "{user_name} || anonymous", session, "Ada"},
		{"fallback skips unknown", "{nope} || {core-root}/x", session, "/core/x"},
		{"fallback skips empty", "{empty} || {user_name}", session, "Ada"},
		{"fallback literal last", "{nope} || {other} || /tmp/out", session, "/tmp/out"},
		{"fallback skips partly unknown", "{project-root}/{nope} || /x", session, "/x"},
		{"fallback without spaces", "{nope}||{date}", session, "2026-01-02"},
		{"fallback in a value", "{dir}", Vars{"dir": "{stories} || {out}/stories", "out": "/o"}, "/o/stories"},
		{"fallback last empty", "{nope} || {empty}", session, ""},
		{"not a fallback: shell", "npm test || true", nil, "npm test || true"},
		{"not a fallback: literal first", "none || {user_name}", session, "none || Ada"},
		{"not a fallback: inside double", "{user_name}{{a || b}}", session, "Ada{{a || b}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.in, tt.v)
			if err != nil {
				t.Fatalf("Expand(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Fatalf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// With every name known, ExpandPartial agrees.
			got2, unk := ExpandPartial(tt.in, tt.v)
			if got2 != tt.want || unk != nil {
				t.Fatalf("ExpandPartial(%q) = %q, %v; want %q, nil", tt.in, got2, unk, tt.want)
			}
		})
	}
}

func TestExpandUnknown(t *testing.T) {
	tests := []struct {
		name, in, unknown string
		v                 Vars
	}{
		{"top level", "{project-root}/{nope}/x", "nope", session},
		{"first of several", "{b}{a}", "b", Vars{}},
		{"inside a value", "{a}", "missing", Vars{"a": "x/{missing}"}},
		{"fallback last alternative", "{x} || {y}", "y", Vars{}},
		{"nil vars", "{a}", "a", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Expand(tt.in, tt.v)
			var ue *UnknownError
			if !errors.As(err, &ue) {
				t.Fatalf("Expand(%q) = %q, %v; want *UnknownError", tt.in, got, err)
			}
			if ue.Name != tt.unknown {
				t.Errorf("Name = %q, want %q", ue.Name, tt.unknown)
			}
			if want := tt.v.Names(); !reflect.DeepEqual(ue.Known, want) && len(want)+len(ue.Known) > 0 {
				t.Errorf("Known = %v, want %v", ue.Known, want)
			}
		})
	}
}

func TestUnknownErrorMessage(t *testing.T) {
	_, err := Expand("{foo}", Vars{"output_folder": "/o", "core-root": "/c", "date": "d"})
	if want := "unknown variable {foo}; known: core-root, date, output_folder"; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	_, err = Expand("{foo}", nil)
	if want := "unknown variable {foo}; no variables are defined"; err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	many := Vars{}
	for i := range 45 {
		many["v"+strconv.Itoa(100+i)] = "x"
	}
	_, err = Expand("{foo}", many)
	msg := err.Error()
	if !strings.Contains(msg, "v129, … (15 more)") || strings.Contains(msg, "v130") {
		t.Fatalf("long list not capped at 30: %s", msg)
	}
}

func TestExpandCycles(t *testing.T) {
	tests := []struct {
		name, in string
		v        Vars
		cycle    []string
		partial  string // ExpandPartial's result: the cycle stays a placeholder
	}{
		{"self", "{a}", Vars{"a": "{a}"}, []string{"a", "a"}, "{a}"},
		{"self inside text", "x/{a}", Vars{"a": "pre-{a}-post"}, []string{"a", "a"}, "x/pre-{a}-post"},
		{"pair", "{a}", Vars{"a": "{b}", "b": "{a}"}, []string{"a", "b", "a"}, "{a}"},
		{"entered midway", "{x}", Vars{"x": "{a}", "a": "{b}", "b": "{c}", "c": "{a}"}, []string{"a", "b", "c", "a"}, "{a}"},
		// Expand fails on a cycle even where a fallback follows; for
		// ExpandPartial the cycle is an unknown, so the fallback applies.
		{"in a fallback alternative", "{a} || safe", Vars{"a": "{a}"}, []string{"a", "a"}, "safe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Expand(tt.in, tt.v)
			var ce *CycleError
			if !errors.As(err, &ce) {
				t.Fatalf("Expand(%q) error = %v, want *CycleError", tt.in, err)
			}
			if !reflect.DeepEqual(ce.Cycle, tt.cycle) {
				t.Fatalf("Cycle = %v, want %v", ce.Cycle, tt.cycle)
			}
			for _, n := range tt.cycle {
				if !strings.Contains(err.Error(), "{"+n+"}") {
					t.Fatalf("message %q does not name {%s}", err, n)
				}
			}
			if out, _ := ExpandPartial(tt.in, tt.v); out != tt.partial {
				t.Fatalf("ExpandPartial(%q) = %q, want %q", tt.in, out, tt.partial)
			}
		})
	}
}

func TestExpandLimits(t *testing.T) {
	// A chain longer than MaxDepth.
	chain := Vars{"v0": "end"}
	for i := 1; i <= MaxDepth+5; i++ {
		chain["v"+strconv.Itoa(i)] = "{v" + strconv.Itoa(i-1) + "}"
	}
	top := "{v" + strconv.Itoa(MaxDepth+5) + "}"
	if _, err := Expand(top, chain); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("deep chain: error = %v, want ErrTooDeep", err)
	}
	if out, unk := ExpandPartial(top, chain); len(unk) == 0 || !strings.Contains(out, "{v") {
		t.Fatalf("deep chain partial = %q, %v; want a placeholder left", out, unk)
	}
	// A chain within MaxDepth is fine.
	if got, err := Expand("{v"+strconv.Itoa(MaxDepth-1)+"}", chain); err != nil || got != "end" {
		t.Fatalf("chain of %d = %q, %v", MaxDepth-1, got, err)
	}

	// Doubling 40 times would be a terabyte: the output cap stops it, fast.
	blow := Vars{"d0": "0123456789"}
	for i := 1; i <= 40; i++ {
		p := "{d" + strconv.Itoa(i-1) + "}"
		blow["d"+strconv.Itoa(i)] = p + p
	}
	if _, err := Expand("{d40}", blow); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("blow-up: error = %v, want ErrTooLarge", err)
	}
	out, unk := ExpandPartial("{d40}", blow)
	if len(out) > 2*MaxOutput || len(unk) == 0 {
		t.Fatalf("blow-up partial: %d bytes, unresolved %v", len(out), unk)
	}
	if got, err := Expand("{d3}", blow); err != nil || len(got) != 80 {
		t.Fatalf("small doubling = %d bytes, %v", len(got), err)
	}
}

func TestExpandPartial(t *testing.T) {
	tests := []struct {
		name, in, want string
		v              Vars
		unknown        []string
	}{
		{"keeps unknown", "{project-root}/{epic_num}/x", "/project/{epic_num}/x", session, []string{"epic_num"}},
		{"dedup in order", "{b}{a}{b}{project-root}{a}", "{b}{a}{b}/project{a}", session, []string{"b", "a"}},
		{"unknown inside a value", "{a}", "x/{deep}", Vars{"a": "x/{deep}"}, []string{"deep"}},
		{"doubles not listed", "{{x}} {y}", "{{x}} {y}", nil, []string{"y"}},
		{"fallback to last", "{p} || {q}/z", "{q}/z", nil, []string{"q"}},
		{"fallback resolved", "{p} || {date}", "2026-01-02", session, nil},
		{"memoized unknown reported again", "{a}-{a}", "{z}-{z}", Vars{"a": "{z}"}, []string{"z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unk := ExpandPartial(tt.in, tt.v)
			if got != tt.want || !reflect.DeepEqual(unk, tt.unknown) {
				t.Fatalf("ExpandPartial(%q) = %q, %v; want %q, %v", tt.in, got, unk, tt.want, tt.unknown)
			}
		})
	}
}

func TestIsPinned(t *testing.T) {
	for name, want := range map[string]bool{
		"project-root": true, "bundle-root": true, "core-root": true, "output_folder": true,
		"input_folder": true, "date": true, "user_name": false, "installed_path": false, "root": false,
	} {
		if got := IsPinned(name); got != want {
			t.Errorf("IsPinned(%q) = %v, want %v", name, got, want)
		}
	}
}

// "{project-root}/{output_folder}/x", as installers up to BMAD 6.10 write
// config values, and a path into the literal "{output_folder}" folder they
// create, are the output folder itself; a relative output folder, or one
// under another root, stays where it is written.
func TestProjectRootOutputFolder(t *testing.T) {
	v := Vars{"project-root": "/project", "output_folder": "/outputs", "planning": "{project-root}/{output_folder}/planning-artifacts"}
	for in, want := range map[string]string{
		"{project-root}/{output_folder}/planning-artifacts": "/outputs/planning-artifacts",
		"{planning}/prd.md":                           "/outputs/planning-artifacts/prd.md",
		"/project/{output_folder}/x.md":               "/outputs/x.md",
		"{project-root}/{output_folder}":              "/outputs",
		"{output_folder}/x.md":                        "/outputs/x.md",
		"/core/{output_folder}/x.md":                  "/core//outputs/x.md",
		"see {project-root}/docs and {output_folder}": "see /project/docs and /outputs",
	} {
		if got, err := Expand(in, v); err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	rel := Vars{"project-root": "/project", "output_folder": "_bmad-output"}
	if got, _ := Expand("{project-root}/{output_folder}/x", rel); got != "/project/_bmad-output/x" {
		t.Errorf("relative output folder: %q", got)
	}
}
