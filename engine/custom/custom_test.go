package custom

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"agentbot/engine/fixtures"
)

const skillName = "bmad-agent-pm"

// project is a temporary copy of the bmad-v6.12.0 fixture's bmad-agent-pm
// skill and central configuration.
type project struct {
	root, skillDir string
}

func (p project) team() string { return filepath.Join(p.root, "_bmad", "custom", skillName+".toml") }
func (p project) user() string {
	return filepath.Join(p.root, "_bmad", "custom", skillName+".user.toml")
}
func (p project) base() string { return filepath.Join(p.skillDir, "customize.toml") }

// newProject copies the fixture skill into <tmp>/.claude/skills/bmad-agent-pm
// and the four central layers into <tmp>/_bmad.
func newProject(tb testing.TB) project {
	tb.Helper()
	src := fixtures.Dir(tb, fixtures.V612)
	root := tb.TempDir()
	p := project{root: root, skillDir: filepath.Join(root, ".claude", "skills", skillName)}
	fixtures.CopyDir(tb, filepath.Join(src, ".claude", "skills", skillName), p.skillDir)
	for _, rel := range []string{"config.toml", "config.user.toml", "custom/config.toml", "custom/config.user.toml"} {
		copyFile(tb, filepath.Join(src, "_bmad", filepath.FromSlash(rel)), filepath.Join(root, "_bmad", filepath.FromSlash(rel)))
	}
	return p
}

// copyFile copies a file writable (the fixture is read-only).
func copyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		tb.Fatal(err)
	}
	writeFile(tb, dst, string(data))
}

func writeFile(tb testing.TB, path, text string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// The fixture's customize.toml, as the rules' starting point.
var (
	basePrinciples = []any{
		"PRDs emerge from user interviews, not template filling.",
		"Ship the smallest thing that validates the assumption.",
		"User value first; technical feasibility is a constraint.",
	}
	baseCodes = []string{"PRD", "CE", "IR", "CC"}
	baseCE    = Table{
		"code":        "CE",
		"description": "Create the Epics and Stories Listing that will drive development",
		"skill":       "bmad-create-epics-and-stories",
	}
)

const teamFile = `# team overrides
[agent]
icon = "🚀"
principles = ["Measure outcomes, not output."]

[[agent.menu]]
code = "CE"
description = "Draft epics from the approved PRD"
prompt = "Read the PRD and draft epics."

[[agent.menu]]
code = "RT"
description = "Run a product retrospective"
skill = "bmad-retrospective"

[[agent.tools]]
id = "a"
code = "X"
v = 1

[[agent.tools]]
id = "b"
v = 1
`

const userFile = `[agent]
icon = "🦊"
principles = ["Keep PRDs under five pages."]
persistent_facts = ["file:{project-root}/docs/standards.md"]

[[agent.menu]]
code = "RT"
description = "My retrospective"
prompt = "Ask me three questions."

[[agent.tools]]
id = "a"
code = "Y"
v = 2
`

// mergeCase is one Skill merge, on a fresh project copy.
type mergeCase struct {
	name  string
	team  string                        // written to _bmad/custom/bmad-agent-pm.toml when not ""
	user  string                        // written to _bmad/custom/bmad-agent-pm.user.toml when not ""
	setup func(t *testing.T, p project) // extra preparation, after the files
	check func(t *testing.T, got Table)
	// error cases
	errFile  func(p project) string // the layer the *Error must name; nil when no error
	errLine  int
	errMsg   string
	noPython bool // not cross-checked against config_utils.py
}

func menu(t *testing.T, got Table) []any {
	t.Helper()
	v, ok := Lookup(got, "agent.menu")
	if !ok {
		t.Fatal("agent.menu missing")
	}
	items, ok := v.([]any)
	if !ok {
		t.Fatalf("agent.menu is %T", v)
	}
	return items
}

func item(t *testing.T, items []any, i int) Table {
	t.Helper()
	if i >= len(items) {
		t.Fatalf("menu has %d items, want index %d", len(items), i)
	}
	m, ok := items[i].(Table)
	if !ok {
		t.Fatalf("menu[%d] is %T", i, items[i])
	}
	return m
}

func codes(items []any) []string {
	var out []string
	for _, it := range items {
		m, _ := it.(Table)
		s, _ := m["code"].(string)
		out = append(out, s)
	}
	return out
}

func want(t *testing.T, got Table, dotted string, v any) {
	t.Helper()
	g, ok := Lookup(got, dotted)
	if !ok {
		t.Fatalf("%s missing", dotted)
	}
	if !reflect.DeepEqual(g, v) {
		t.Errorf("%s = %#v, want %#v", dotted, g, v)
	}
}

func cat(parts ...[]any) []any {
	var out []any
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var mergeCases = []mergeCase{
	{
		name: "no overrides",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.icon", "📋")
			want(t, got, "agent.principles", basePrinciples)
			if c := codes(menu(t, got)); !reflect.DeepEqual(c, baseCodes) {
				t.Errorf("codes %v", c)
			}
		},
	},
	{
		name: "team",
		team: teamFile,
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.icon", "🚀")
			want(t, got, "agent.name", "John")
			want(t, got, "agent.principles", cat(basePrinciples, []any{"Measure outcomes, not output."}))
			items := menu(t, got)
			if len(items) != 5 {
				t.Fatalf("menu length %d, want 5: %v", len(items), codes(items))
			}
			if c := codes(items); !reflect.DeepEqual(c, []string{"PRD", "CE", "IR", "CC", "RT"}) {
				t.Errorf("codes %v", c)
			}
			ce := item(t, items, 1)
			wantCE := Table{"code": "CE", "description": "Draft epics from the approved PRD", "prompt": "Read the PRD and draft epics."}
			if !reflect.DeepEqual(ce, wantCE) {
				t.Errorf("menu[1] = %v, want the whole replacement %v", ce, wantCE)
			}
			if _, ok := ce["skill"]; ok {
				t.Error("the replaced item kept the old item's skill")
			}
			if rt := item(t, items, 4); rt["skill"] != "bmad-retrospective" {
				t.Errorf("menu[4] = %v", rt)
			}
			if prd := item(t, items, 0); prd["skill"] != "bmad-prd" {
				t.Errorf("menu[0] = %v", prd)
			}
		},
	},
	{
		name: "team and user",
		team: teamFile,
		user: userFile,
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.icon", "🦊")
			want(t, got, "agent.principles", cat(basePrinciples, []any{"Measure outcomes, not output.", "Keep PRDs under five pages."}))
			want(t, got, "agent.persistent_facts", []any{"file:{project-root}/docs/standards.md"})
			items := menu(t, got)
			if c := codes(items); !reflect.DeepEqual(c, []string{"PRD", "CE", "IR", "CC", "RT"}) {
				t.Fatalf("codes %v", c)
			}
			if rt := item(t, items, 4); !reflect.DeepEqual(rt, Table{"code": "RT", "description": "My retrospective", "prompt": "Ask me three questions."}) {
				t.Errorf("menu[4] = %v", rt)
			}
			if ce := item(t, items, 1); ce["description"] != "Draft epics from the approved PRD" {
				t.Errorf("menu[1] = %v", ce)
			}
			// Not every tool has a code, all have an id: keyed by id.
			want(t, got, "agent.tools", []any{
				Table{"id": "a", "code": "Y", "v": int64(2)},
				Table{"id": "b", "v": int64(1)},
			})
		},
	},
	{
		name: "user only",
		user: "[agent]\nicon = \"🦊\"\n",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.icon", "🦊")
			want(t, got, "agent.title", "Product Manager")
		},
	},
	{
		name: "item without code appends",
		team: "[[agent.menu]]\ndescription = \"No code\"\nprompt = \"Say hello.\"\n",
		check: func(t *testing.T, got Table) {
			items := menu(t, got)
			if len(items) != len(baseCodes)+1 {
				t.Fatalf("menu length %d, want %d", len(items), len(baseCodes)+1)
			}
			if c := codes(items); !reflect.DeepEqual(c, []string{"PRD", "CE", "IR", "CC", ""}) {
				t.Errorf("codes %v", c)
			}
			if last := item(t, items, 4); !reflect.DeepEqual(last, Table{"description": "No code", "prompt": "Say hello."}) {
				t.Errorf("last = %v", last)
			}
		},
	},
	{
		name: "unkeyed array does not replace a shared code",
		team: "[[agent.menu]]\ndescription = \"No code\"\nprompt = \"Say hello.\"\n\n[[agent.menu]]\ncode = \"CE\"\ndescription = \"Second CE\"\n",
		check: func(t *testing.T, got Table) {
			items := menu(t, got)
			if c := codes(items); !reflect.DeepEqual(c, []string{"PRD", "CE", "IR", "CC", "", "CE"}) {
				t.Fatalf("codes %v", c)
			}
			if ce := item(t, items, 1); !reflect.DeepEqual(ce, baseCE) {
				t.Errorf("menu[1] = %v, want the original %v", ce, baseCE)
			}
			if ce := item(t, items, 5); ce["description"] != "Second CE" {
				t.Errorf("menu[5] = %v", ce)
			}
		},
	},
	{
		name: "same new code twice in one override",
		team: "[[agent.menu]]\ncode = \"NEW\"\ndescription = \"one\"\n\n[[agent.menu]]\ncode = \"NEW\"\ndescription = \"two\"\n",
		check: func(t *testing.T, got Table) {
			items := menu(t, got)
			if c := codes(items); !reflect.DeepEqual(c, []string{"PRD", "CE", "IR", "CC", "NEW"}) {
				t.Fatalf("codes %v", c)
			}
			if n := item(t, items, 4); n["description"] != "two" {
				t.Errorf("menu[4] = %v", n)
			}
		},
	},
	{
		name: "mixed arrays append",
		team: "[agent]\nprinciples = [{text = \"a table\"}]\nactivation_steps_prepend = [\"step\"]\n",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.principles", cat(basePrinciples, []any{Table{"text": "a table"}}))
			want(t, got, "agent.activation_steps_prepend", []any{"step"})
		},
	},
	{
		name: "type change scalar to array and array to scalar",
		team: "[agent]\nicon = [\"a\"]\nprinciples = \"just one\"\n",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.icon", []any{"a"})
			want(t, got, "agent.principles", "just one")
			want(t, got, "agent.name", "John")
		},
	},
	{
		name: "type change scalar to table",
		team: "[agent.icon]\nglyph = \"x\"\n",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.icon", Table{"glyph": "x"})
		},
	},
	{
		name: "type change table to string",
		team: "agent = \"plain\"\n",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent", "plain")
			if _, ok := Lookup(got, "agent.icon"); ok {
				t.Error("agent.icon survived the table's replacement")
			}
		},
	},
	{
		name: "other scalar types",
		team: "[agent]\ncount = 3\nratio = 1.5\non = true\n",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.count", int64(3))
			want(t, got, "agent.ratio", 1.5)
			want(t, got, "agent.on", true)
		},
	},
	{
		name:    "invalid TOML in team file",
		team:    "# team\n[agent]\nicon = \"🚀\"\n= \"no key\"\n",
		errFile: project.team, errLine: 4, errMsg: "invalid TOML",
	},
	{
		name:    "invalid TOML in user file",
		team:    teamFile,
		user:    "[agent]\n\n\n\n\nicon = \n",
		errFile: project.user, errLine: 6, errMsg: "invalid TOML",
	},
	{
		name:    "duplicate key",
		team:    "[agent]\nicon = \"a\"\nicon = \"b\"\n",
		errFile: project.team, errLine: 3, errMsg: "invalid TOML",
	},
	{
		name:    "missing base",
		setup:   func(t *testing.T, p project) { mustRemove(t, p.base()) },
		errFile: project.base, errMsg: "required TOML file not found",
	},
	{
		name:    "keyed code not a string",
		team:    "[[agent.menu]]\ncode = 3\ndescription = \"x\"\n",
		errFile: project.team, errMsg: "keyed array identifier `code` must be a string, got int",
	},
	{
		name:    "keyed code empty",
		team:    "[[agent.menu]]\ncode = \"\"\ndescription = \"x\"\n",
		errFile: project.team, errMsg: "keyed array identifier `code` must not be empty",
	},
	{
		name:    "keyed id not a string, in the user layer",
		team:    teamFile,
		user:    "[[agent.tools]]\nid = 1979-05-27\n",
		errFile: project.user, errMsg: "keyed array identifier `id` must be a string, got date",
	},
	{
		name: "bad code in a single layer is not checked",
		team: "[[agent.other]]\ncode = 3\n",
		check: func(t *testing.T, got Table) {
			want(t, got, "agent.other", []any{Table{"code": int64(3)}})
		},
	},
	{
		name:    "folder as a layer",
		setup:   func(t *testing.T, p project) { mustMkdir(t, p.team()) },
		errFile: project.team, errMsg: "TOML layer is not a file",
	},
	{
		name: "FIFO as a layer",
		setup: func(t *testing.T, p project) {
			mustMkdir(t, filepath.Dir(p.team()))
			if err := mkfifo(p.team()); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		},
		errFile: project.team, errMsg: "TOML layer is not a file",
	},
	{
		name: "deep nesting within the limit",
		team: "[agent." + strings.Repeat("x.", 40) + "y]\n" + strings.Repeat("k.", 10) + "v = " + strings.Repeat("[", 11) + "1" + strings.Repeat("]", 11) + "\n",
		check: func(t *testing.T, got Table) {
			v, ok := Lookup(got, "agent."+strings.Repeat("x.", 40)+"y."+strings.Repeat("k.", 10)+"v")
			if !ok || Text(v) != strings.Repeat("[", 11)+"1"+strings.Repeat("]", 11) {
				t.Errorf("deep value: %v, %v", Text(v), ok)
			}
			want(t, got, "agent.icon", "📋")
		},
	},
	{
		name:    "nesting over the limit",
		team:    "[agent]\nv = " + strings.Repeat("{a = ", 70) + "1" + strings.Repeat("}", 70) + "\n",
		errFile: project.team, errLine: 2, errMsg: "nesting deeper than 64 levels",
		noPython: true, // a guard against BurntSushi/toml's quadratic cost; tomllib has none
	},
	{
		name:    "file over MaxFileSize",
		team:    "# " + strings.Repeat("x", MaxFileSize) + "\n",
		errFile: project.team, errMsg: "larger than",
		noPython: true, // config_utils.py has no size cap
	},
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// prepare builds the case's project.
func (c mergeCase) prepare(t *testing.T) project {
	t.Helper()
	p := newProject(t)
	if c.team != "" {
		writeFile(t, p.team(), c.team)
	}
	if c.user != "" {
		writeFile(t, p.user(), c.user)
	}
	if c.setup != nil {
		c.setup(t, p)
	}
	return p
}

// skillWithin runs Skill, failing the test if it does not return promptly.
func skillWithin(t *testing.T, p project) (Table, error) {
	t.Helper()
	type result struct {
		t   Table
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := Skill(p.root, p.skillDir)
		done <- result{got, err}
	}()
	select {
	case r := <-done:
		return r.t, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("Skill did not return within 10s")
		return nil, nil
	}
}

func TestSkillMerge(t *testing.T) {
	for _, c := range mergeCases {
		t.Run(c.name, func(t *testing.T) {
			p := c.prepare(t)
			got, err := skillWithin(t, p)
			if c.errFile != nil {
				if err == nil {
					t.Fatalf("no error; got %v", Text(got))
				}
				if got != nil {
					t.Errorf("a table came with the error (fell back?): %v", Text(got))
				}
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error %T %v is not an *Error", err, err)
				}
				if wantPath := c.errFile(p); e.Path != wantPath {
					t.Errorf("Path = %q, want %q", e.Path, wantPath)
				}
				if e.Line != c.errLine {
					t.Errorf("Line = %d, want %d (%v)", e.Line, c.errLine, err)
				}
				if !strings.Contains(e.Msg, c.errMsg) {
					t.Errorf("Msg = %q, want it to contain %q", e.Msg, c.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, got)
		})
	}
}

func TestSkillWithoutProjectRoot(t *testing.T) {
	p := newProject(t)
	writeFile(t, p.team(), teamFile)
	got, err := Skill("", p.skillDir)
	if err != nil {
		t.Fatal(err)
	}
	want(t, got, "agent.icon", "📋")
	if n := len(menu(t, got)); n != 4 {
		t.Errorf("menu length %d, want 4", n)
	}
}

func TestCentral(t *testing.T) {
	p := newProject(t)
	got, err := Central(p.root)
	if err != nil {
		t.Fatal(err)
	}
	want(t, got, "core.user_name", "Ines")
	want(t, got, "core.project_name", "bmadnew")
	want(t, got, "core.communication_language", "English")
	want(t, got, "modules.bmm.planning_artifacts", "{project-root}/_bmad-output/planning-artifacts")
	want(t, got, "modules.bmm.user_skill_level", "intermediate")
	want(t, got, "agents.bmad-agent-pm.icon", "📋")

	// The real fixture, in place, gives the same.
	direct, err := Central(fixtures.Dir(t, fixtures.V612))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(direct, got) {
		t.Error("Central on the fixture differs from Central on its copy")
	}
}

func TestCentralOverride(t *testing.T) {
	p := newProject(t)
	custom := filepath.Join(p.root, "_bmad", "custom", "config.toml")
	writeFile(t, custom, "[agents.bmad-agent-pm]\ndescription = \"Prefers short, bulleted PRDs.\"\n")
	writeFile(t, filepath.Join(p.root, "_bmad", "custom", "config.user.toml"), "[core]\nuser_name = \"Ana\"\n")
	got, err := Central(p.root)
	if err != nil {
		t.Fatal(err)
	}
	want(t, got, "agents.bmad-agent-pm.description", "Prefers short, bulleted PRDs.")
	want(t, got, "agents.bmad-agent-pm.icon", "📋")
	want(t, got, "agents.bmad-agent-pm.name", "John")
	want(t, got, "core.user_name", "Ana")
	want(t, got, "core.project_name", "bmadnew")

	writeFile(t, custom, "[agents.bmad-agent-pm\n")
	_, err = Central(p.root)
	var e *Error
	if !errors.As(err, &e) || e.Path != custom || e.Line != 1 {
		t.Errorf("broken custom/config.toml: %v", err)
	}
	mustRemove(t, filepath.Join(p.root, "_bmad", "config.toml"))
	_, err = Central(p.root)
	if !errors.As(err, &e) || e.Msg != "required TOML file not found" {
		t.Errorf("missing config.toml: %v", err)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.toml")
	got, err := LoadFile(missing, false)
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("optional missing: %v, %v; want an empty table", got, err)
	}
	_, err = LoadFile(missing, true)
	var e *Error
	if !errors.As(err, &e) || e.Path != missing || e.Msg != "required TOML file not found" {
		t.Errorf("required missing: %v", err)
	}
	under := filepath.Join(dir, "file.toml", "x.toml") // a file as a folder: missing, as pathlib says
	writeFile(t, filepath.Join(dir, "file.toml"), "a = 1\n")
	if got, err := LoadFile(under, false); err != nil || len(got) != 0 {
		t.Errorf("path under a file: %v, %v", got, err)
	}
	empty := filepath.Join(dir, "empty.toml")
	writeFile(t, empty, "")
	if got, err := LoadFile(empty, true); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty file: %v, %v", got, err)
	}
	aot := filepath.Join(dir, "aot.toml")
	writeFile(t, aot, "[[a]]\nx = 1\n[[a]]\ny = [{z = 2}]\n")
	got, err = LoadFile(aot, true)
	if err != nil {
		t.Fatal(err)
	}
	wantT := Table{"a": []any{Table{"x": int64(1)}, Table{"y": []any{Table{"z": int64(2)}}}}}
	if !reflect.DeepEqual(got, wantT) {
		t.Errorf("arrays of tables: %#v", got)
	}
	exact := filepath.Join(dir, "exact.toml")
	writeFile(t, exact, "a = \""+strings.Repeat("x", MaxFileSize-7)+"\"\n") // 'a = "' + x… + '"\n' is MaxFileSize bytes
	if _, err := LoadFile(exact, true); err != nil {
		t.Errorf("a file of exactly MaxFileSize bytes: %v", err)
	}
}

// syntaxCases are invalid layers with the line tomllib reports.
var syntaxCases = []struct {
	name, text string
	line       int
}{
	{"unclosed table header", "[agents.bmad-agent-pm\n", 1},
	{"blank key", "# team\n[agent]\nicon = \"x\"\n= \"no key\"\n", 4},
	{"missing value", "[agent]\n\n\n\n\nicon = \n", 6},
	{"duplicate key", "[agent]\nicon = \"a\"\nicon = \"b\"\n", 3},
	{"newline in string", "a = \"abc\nb=1\n", 1},
	{"two values", "a = 1 2\n", 1},
	{"UTF-8 byte order mark", "\xef\xbb\xbfa = 1\n", 1},
	{"invalid UTF-8", "a = 1\nb = \"\xff\"\n", 2},
}

// TestByteOrderMarks: the UTF-8 and UTF-16 marks BurntSushi/toml would
// skip are refused on line 1 (tomllib reads them as text), and the text
// after the mark is never decoded.
func TestByteOrderMarks(t *testing.T) {
	for _, bom := range []string{"\xef\xbb\xbf", "\xff\xfe", "\xfe\xff"} {
		got, err := parse([]byte(bom + "a = 1\n"))
		if got != nil || err == nil || err.Line != 1 || err.Msg != "invalid TOML: a byte order mark is not allowed" {
			t.Errorf("%q: got %v, %+v; want the byte order mark error on line 1", bom, got, err)
		}
	}
	if got, err := parse([]byte("a = \"\xef\xbb\xbf\"\n")); err != nil || got["a"] != "\ufeff" {
		t.Errorf("a mark inside a string: got %v, %+v; want it kept", got, err)
	}
}

func TestSyntaxErrorLine(t *testing.T) {
	for _, c := range syntaxCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "layer.toml")
			writeFile(t, path, c.text)
			got, err := LoadFile(path, false)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, %v; want an *Error", got, err)
			}
			if e.Path != path || e.Line != c.line || !strings.HasPrefix(e.Msg, "invalid TOML: ") {
				t.Errorf("got %+v, want line %d", e, c.line)
			}
			if wantS := fmt.Sprintf("%s:%d: invalid TOML: ", path, c.line); !strings.HasPrefix(e.Error(), wantS) {
				t.Errorf("Error() = %q, want prefix %q", e.Error(), wantS)
			}
		})
	}
}

// depthCases are layers at and over maxDepth; line 0 means accepted.
var depthCases = []struct {
	name string
	text string
	line int // 0: accepted
}{
	{"header 64", "[" + strings.Repeat("a.", 63) + "b]\nx = 1\n", 0},
	{"header 65", "[" + strings.Repeat("a.", 64) + "b]\n", 1},
	{"array of tables header 65", "\n[[" + strings.Repeat("a.", 64) + "b]]\n", 2},
	{"dotted key 64", strings.Repeat("a.", 63) + "b = 1\n", 0},
	{"dotted key 65", strings.Repeat("a.", 64) + "b = 1\n", 1},
	{"header plus key 64", "[" + strings.Repeat("a.", 31) + "b]\n" + strings.Repeat("c.", 31) + "d = 1\n", 0},
	{"header plus key 65", "[" + strings.Repeat("a.", 31) + "b]\n" + strings.Repeat("c.", 32) + "d = 1\n", 2},
	{"arrays 63 under a key", "a = " + strings.Repeat("[", 63) + strings.Repeat("]", 63) + "\n", 0},
	{"arrays 64 under a key", "a = " + strings.Repeat("[", 64) + strings.Repeat("]", 64) + "\n", 1},
	{"multi-line array", "a = [\n" + strings.Repeat("[\n", 70) + "]\n", 64},
	{"inline tables 63", "a = " + strings.Repeat("{b = ", 63) + "1" + strings.Repeat("}", 63) + "\n", 0},
	{"inline tables 64", "a = " + strings.Repeat("{b = ", 64) + "1" + strings.Repeat("}", 64) + "\n", 1},
	{"siblings do not add up", "a = [" + strings.Repeat("[[1]], ", 200) + "]\nb = {" + strings.Repeat("x.", 10) + "y = 1, " + strings.Repeat("x.", 10) + "z = 2}\n", 0},
	{"floats are values", "a = [" + strings.Repeat("1.5, ", 200) + "]\nd = 1.0e3\n", 0},
	{"brackets in strings", "a = \"" + strings.Repeat("[{.", 100) + "\"\nb = '" + strings.Repeat("[.", 100) + "'\nc = \"\"\"\n" + strings.Repeat("[.\\\"", 100) + "\n\"\"\"\"\nd = '''" + strings.Repeat("[.", 100) + "''''\n\"" + strings.Repeat("k.", 100) + "\" = 1\n", 0},
	{"brackets in comments", "# " + strings.Repeat("[{.", 100) + "\na = [ # " + strings.Repeat("[", 100) + "\n1]\n", 0},
	{"depth after a multi-line string", "a = \"\"\"\n\n\"\"\"\nb = " + strings.Repeat("[", 70) + strings.Repeat("]", 70) + "\n", 4},
}

func TestDepthLimit(t *testing.T) {
	for _, c := range depthCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parse([]byte(c.text))
			if c.line == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got == nil {
					t.Fatal("no table")
				}
				return
			}
			if err == nil || err.Line != c.line || !strings.Contains(err.Msg, "nesting deeper than 64 levels") {
				t.Fatalf("got %+v, want the depth error on line %d", err, c.line)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Path: "a/b.toml", Line: 4, Msg: "invalid TOML: x"}, "a/b.toml:4: invalid TOML: x"},
		{Error{Path: "a/b.toml", Msg: "required TOML file not found"}, "a/b.toml: required TOML file not found"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.e, got, c.want)
		}
	}
}

func TestMergeRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		base, ov any
		want     any
		err      string
	}{
		{"scalar override", "a", "b", "b", ""},
		{"nil base", nil, Table{"a": int64(1)}, Table{"a": int64(1)}, ""},
		{"table over scalar", int64(1), Table{"a": int64(1)}, Table{"a": int64(1)}, ""},
		{"deep", Table{"a": Table{"x": int64(1), "y": int64(2)}}, Table{"a": Table{"y": int64(3), "z": int64(4)}}, Table{"a": Table{"x": int64(1), "y": int64(3), "z": int64(4)}}, ""},
		{"append", []any{"a"}, []any{"b", "a"}, []any{"a", "b", "a"}, ""},
		{"empty arrays", []any{}, []any{}, []any{}, ""},
		{"keyed by id", []any{Table{"id": "x", "v": int64(1)}}, []any{Table{"id": "x", "w": int64(2)}, Table{"id": "y"}}, []any{Table{"id": "x", "w": int64(2)}, Table{"id": "y"}}, ""},
		{"code wins over id", []any{Table{"id": "1", "code": "A"}, Table{"id": "2", "code": "B"}}, []any{Table{"id": "1", "code": "B"}}, []any{Table{"id": "1", "code": "A"}, Table{"id": "1", "code": "B"}}, ""},
		{"keyed inside base only", []any{Table{"code": "A"}, Table{"code": "A", "n": int64(2)}}, []any{Table{"code": "A", "n": int64(3)}}, []any{Table{"code": "A"}, Table{"code": "A", "n": int64(3)}}, ""},
		{"one scalar unkeys", []any{Table{"code": "A"}}, []any{"s", Table{"code": "A"}}, []any{Table{"code": "A"}, "s", Table{"code": "A"}}, ""},
		{"bad id", []any{Table{"id": true}}, []any{Table{"id": "x"}}, nil, "keyed array identifier `id` must be a string, got bool"},
		{"bad code in override", []any{Table{"code": "A"}}, []any{Table{"code": []any{"A"}}}, nil, "keyed array identifier `code` must be a string, got list"},
		{"bad code does not fall back to id", []any{Table{"code": 1.5, "id": "a"}}, []any{Table{"code": "B", "id": "b"}}, nil, "keyed array identifier `code` must be a string, got float"},
		{"bad code deep", Table{"t": Table{"m": []any{Table{"code": "A"}}}}, Table{"t": Table{"m": []any{Table{"code": ""}}}}, nil, "keyed array identifier `code` must not be empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Merge(c.base, c.ov)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				var e *Error
				if !errors.As(err, &e) {
					t.Errorf("error %T is not an *Error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestMergeLayers(t *testing.T) {
	got, err := MergeLayers(Table{"a": []any{"x"}}, nil, Table{"a": []any{"y"}, "b": int64(1)}, Table{"b": int64(2)})
	if err != nil {
		t.Fatal(err)
	}
	if wantT := (Table{"a": []any{"x", "y"}, "b": int64(2)}); !reflect.DeepEqual(got, wantT) {
		t.Errorf("got %v, want %v", got, wantT)
	}
	got, err = MergeLayers()
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("no layers: %v, %v", got, err)
	}
}

func TestMergeDoesNotMutate(t *testing.T) {
	mk := func() (Table, Table) {
		base := Table{
			"agent": Table{
				"icon":       "📋",
				"principles": []any{"p1"},
				"menu":       []any{Table{"code": "A", "d": "a"}, Table{"code": "B", "d": "b"}},
				"nested":     Table{"x": int64(1)},
			},
		}
		ov := Table{
			"agent": Table{
				"icon":       "🚀",
				"principles": []any{"p2"},
				"menu":       []any{Table{"code": "B", "d": "B2"}, Table{"code": "C", "d": "c"}},
				"nested":     Table{"y": int64(2)},
			},
			"extra": []any{int64(1)},
		}
		return base, ov
	}
	base, ov := mk()
	got, err := Merge(base, ov)
	if err != nil {
		t.Fatal(err)
	}
	wantBase, wantOv := mk()
	if !reflect.DeepEqual(base, wantBase) || !reflect.DeepEqual(ov, wantOv) {
		t.Fatalf("Merge changed its inputs:\nbase %v\nov %v", Text(base), Text(ov))
	}
	// Writing into the result's tables and keyed items leaves the inputs alone.
	g := got.(Table)
	ga := g["agent"].(Table)
	ga["icon"] = "changed"
	ga["nested"].(Table)["z"] = int64(3)
	for _, it := range ga["menu"].([]any) {
		it.(Table)["d"] = "changed"
	}
	ga["principles"].([]any)[0] = "changed"
	if !reflect.DeepEqual(base, wantBase) || !reflect.DeepEqual(ov, wantOv) {
		t.Fatalf("writing into the result changed the inputs:\nbase %v\nov %v", Text(base), Text(ov))
	}
	// And the result is what the rules say.
	got2, _ := Merge(wantBase, wantOv)
	wantGot := Table{
		"agent": Table{
			"icon":       "🚀",
			"principles": []any{"p1", "p2"},
			"menu":       []any{Table{"code": "A", "d": "a"}, Table{"code": "B", "d": "B2"}, Table{"code": "C", "d": "c"}},
			"nested":     Table{"x": int64(1), "y": int64(2)},
		},
		"extra": []any{int64(1)},
	}
	if !reflect.DeepEqual(got2, wantGot) {
		t.Errorf("got %v, want %v", Text(got2), Text(wantGot))
	}
}

func TestLookup(t *testing.T) {
	tb := Table{"agent": Table{"icon": "📋", "menu": []any{Table{"code": "A"}}}, "a.b": int64(1), "": "empty"}
	for _, c := range []struct {
		path string
		want any
		ok   bool
	}{
		{"agent.icon", "📋", true},
		{"agent", tb["agent"], true},
		{"agent.menu", []any{Table{"code": "A"}}, true},
		{"agent.menu.0", nil, false},
		{"agent.icon.x", nil, false},
		{"agent.missing", nil, false},
		{"a.b", nil, false},
		{"", "empty", true},
	} {
		got, ok := Lookup(tb, c.path)
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v, %v", c.path, got, ok, c.want, c.ok)
		}
	}
	if _, ok := Lookup(nil, "a"); ok {
		t.Error("Lookup in a nil table found something")
	}
}

func TestText(t *testing.T) {
	parsed, perr := parse([]byte("od = 1979-05-27T07:32:00Z\nodo = 1979-05-27T00:32:00.5-07:00\nld = 1979-05-27T07:32:00\nd = 1979-05-27\nlt = 07:32:00.25\n"))
	if perr != nil {
		t.Fatal(perr)
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{"plain {x} <b>", "plain {x} <b>"},
		{nil, ""},
		{int64(3), "3"},
		{int64(-42), "-42"},
		{1.5, "1.5"},
		{1.0, "1.0"},
		{-0.0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1e20, "1e+20"},
		{1e15, "1000000000000000.0"},
		{1e16, "1e+16"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{math.Inf(1), "inf"},
		{math.Inf(-1), "-inf"},
		{math.NaN(), "nan"},
		{true, "true"},
		{false, "false"},
		{parsed["od"], "1979-05-27T07:32:00Z"},
		{parsed["odo"], "1979-05-27T00:32:00.5-07:00"},
		{parsed["ld"], "1979-05-27T07:32:00"},
		{parsed["d"], "1979-05-27"},
		{parsed["lt"], "07:32:00.25"},
		{[]any{"a", int64(1), 2.0, true}, `["a",1,2.0,true]`},
		{[]any{}, `[]`},
		{Table{}, `{}`},
		{Table{"b": int64(1), "a": []any{Table{"z": "<&>", "y": math.NaN()}}, "c": parsed["d"]}, `{"a":[{"y":"nan","z":"<&>"}],"b":1,"c":"1979-05-27"}`},
		// The decoder's arrays of tables, float32, and other slices and
		// maps (walked by reflection) get the same treatment.
		{[]map[string]any{{"a": 1.0}, {"b": math.Inf(1)}}, `[{"a":1.0},{"b":"inf"}]`},
		{[]any{float32(0.5)}, `[0.5]`},
		{[]float64{1, math.Inf(-1)}, `[1.0,"-inf"]`},
		{[2]any{2.0, parsed["d"]}, `[2.0,"1979-05-27"]`},
		{map[string]float64{"y": 3, "x": math.NaN()}, `{"x":"nan","y":3.0}`},
		{map[int]float64{1: 2}, `{"1":2}`},
	} {
		if got := Text(c.v); got != c.want {
			t.Errorf("Text(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
	// Deterministic across calls despite map order.
	big := Table{}
	for _, k := range []string{"k", "j", "i", "h", "g", "f", "e", "d", "c", "b", "a"} {
		big[k] = Table{"x": k, "y": []any{k}}
	}
	first := Text(big)
	for range 20 {
		if Text(big) != first {
			t.Fatal("Text is not deterministic")
		}
	}
}

func BenchmarkSkill(b *testing.B) {
	p := newProject(b)
	writeFile(b, p.team(), teamFile)
	writeFile(b, p.user(), userFile)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Skill(p.root, p.skillDir); err != nil {
			b.Fatal(err)
		}
	}
}
