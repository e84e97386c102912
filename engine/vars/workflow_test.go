package vars

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// base is what a session passes to ResolveWorkflow.
func base() Vars {
	return Vars{
		"project-root":  "/project",
		"bundle-root":   "/project/bmad",
		"core-root":     "/core",
		"output_folder": "/outputs",
		"date":          "2026-01-02",
	}
}

// moduleConfig is a config.yaml in the shape modules ship.
const moduleConfig = `# module config
user_name: Cfg User
communication_language: English
output_folder: "{project-root}/docs"
tech_docs: "{project-root}/docs"
stories: "{tech_docs}/stories"
project_name: Demo
`

// configs returns a readConfig serving files by path, and a counter of its
// calls.
func configs(files map[string]string) (func(string) (Vars, error), *int) {
	calls := 0
	return func(p string) (Vars, error) {
		calls++
		data, ok := files[p]
		if !ok {
			return nil, errors.New("file does not exist")
		}
		return ParseConfig([]byte(data))
	}, &calls
}

func TestResolveWorkflow(t *testing.T) {
	cfg := map[string]string{"/project/bmad/mod/config.yaml": moduleConfig}
	tests := []struct {
		name       string
		doc        string
		base       Vars // nil: base()
		files      map[string]string
		values     Vars     // expected top-level values (a subset)
		unresolved []string // exactly
		notes      bool     // whether Notes say the config was unavailable
	}{
		{
			name: "keys refer to keys in any order",
			doc: `template: "{installed_path}/template.md"
installed_path: "{bundle-root}/mod/workflows/demo"
c: "{b}/c"
b: "{a}/b"
a: "{project-root}/a"
`,
			values: Vars{"template": "/project/bmad/mod/workflows/demo/template.md", "installed_path": "/project/bmad/mod/workflows/demo", "c": "/project/a/b/c"},
		},
		{
			name: "config_source keys",
			doc: `config_source: "{bundle-root}/mod/config.yaml"
user_name: "{config_source}:user_name"
tech_docs: "{config_source}:tech_docs"
stories: "{config_source}:stories"
greeting: "Hello {user_name} in {config_source}:communication_language"
`,
			files: cfg,
			values: Vars{"user_name": "Cfg User", "tech_docs": "/project/docs", "stories": "/project/docs/stories",
				"greeting": "Hello Cfg User in English", "config_source": "/project/bmad/mod/config.yaml"},
		},
		{
			name: "session output_folder beats config and workflow",
			doc: `config_source: "{bundle-root}/mod/config.yaml"
output_folder: "{config_source}:output_folder"
direct: "{config_source}:output_folder"
out_file: "{output_folder}/x.md"
`,
			files:  cfg,
			values: Vars{"output_folder": "/outputs", "direct": "/outputs", "out_file": "/outputs/x.md"},
		},
		{
			name:   "session output_folder beats a literal too",
			doc:    "output_folder: /elsewhere\nout_file: \"{output_folder}/x.md\"\n",
			values: Vars{"output_folder": "/outputs", "out_file": "/outputs/x.md"},
		},
		{
			name: "without a session output_folder the config's expands with base",
			doc: `config_source: "{bundle-root}/mod/config.yaml"
output_folder: "{config_source}:output_folder"
out_file: "{output_folder}/x.md"
`,
			base:   Vars{"project-root": "/project", "bundle-root": "/project/bmad", "date": "d"},
			files:  cfg,
			values: Vars{"output_folder": "/project/docs", "out_file": "/project/docs/x.md"},
		},
		{
			name: "workflow keys beat non-path session keys",
			doc: `config_source: "{bundle-root}/mod/config.yaml"
user_name: "{config_source}:user_name"
hello: "hi {user_name}"
lang: "{communication_language}"
`,
			base:   Vars{"bundle-root": "/project/bmad", "user_name": "Session User", "communication_language": "Klingon"},
			files:  cfg,
			values: Vars{"user_name": "Cfg User", "hello": "hi Cfg User", "lang": "Klingon"},
		},
		{
			name: "config key missing: base supplies it, else it stays",
			doc: `config_source: "{bundle-root}/mod/config.yaml"
skill: "{config_source}:user_skill_level"
team: "{config_source}:team_name"
`,
			base:       Vars{"bundle-root": "/project/bmad", "user_skill_level": "expert"},
			files:      cfg,
			values:     Vars{"skill": "expert", "team": "{team_name}"},
			unresolved: []string{"team_name"},
		},
		{
			name: "missing config file does not fail",
			doc: `config_source: "{bundle-root}/nope/config.yaml"
user_name: "{config_source}:user_name"
lang: "{config_source}:communication_language"
output_folder: "{config_source}:output_folder"
hello: "hi {user_name}"
`,
			files:      cfg,
			values:     Vars{"user_name": "{user_name}", "lang": "{communication_language}", "output_folder": "/outputs", "hello": "hi {user_name}"},
			unresolved: []string{"user_name", "communication_language"},
			notes:      true,
		},
		{
			name: "config_source with an unknown variable is not read",
			doc: `config_source: "{module_root_x}/config.yaml"
user_name: "{config_source}:user_name"
`,
			files:      cfg,
			values:     Vars{"config_source": "{module_root_x}/config.yaml", "user_name": "{user_name}"},
			unresolved: []string{"module_root_x", "user_name"},
			notes:      true,
		},
		{
			name:       "no config_source at all",
			doc:        "user_name: \"{config_source}:user_name\"\n",
			values:     Vars{"user_name": "{user_name}"},
			unresolved: []string{"user_name"},
			notes:      true,
		},
		{
			name:   "system-generated date",
			doc:    "date: system-generated\nfile: \"{output_folder}/r-{date}.md\"\n",
			values: Vars{"date": "2026-01-02", "file": "/outputs/r-2026-01-02.md"},
		},
		{
			name:       "system-generated date without a session date",
			doc:        "date: system-generated\nfile: \"r-{date}.md\"\n",
			base:       Vars{},
			values:     Vars{"date": "{date}", "file": "r-{date}.md"},
			unresolved: []string{"date"},
		},
		{
			name:   "system-generated year and month from the date",
			doc:    "current_year: system-generated\ncurrent_month: system-generated\nq: \"news {current_year}\"\n",
			values: Vars{"current_year": "2026", "current_month": "01", "q": "news 2026"},
		},
		{
			name:       "system-generated with nothing to derive from",
			doc:        "build_id: system-generated\n",
			values:     Vars{"build_id": "{build_id}"},
			unresolved: []string{"build_id"},
		},
		{
			name:   "booleans, numbers and nulls stay",
			doc:    "standalone: true\ntemplate: false\nepic_num: 1\nnothing:\npath: \"e{epic_num}-{standalone}\"\n",
			values: Vars{"standalone": "true", "template": "false", "epic_num": "1", "nothing": "", "path": "e1-true"},
		},
		{
			name: "unknown names listed once, in order",
			doc: `file: "{story_dir}/{epic_num}.md"
again: "{epic_num}"
nested:
  - "{story_key}"
  - deeper: "{story_dir}"
`,
			values:     Vars{"file": "{story_dir}/{epic_num}.md", "again": "{epic_num}"},
			unresolved: []string{"story_dir", "epic_num", "story_key"},
		},
		{
			name:   "double placeholders stay for the model",
			doc:    "default_output_file: \"{output_folder}/brief-{{project_name}}-{{date}}.md\"\n",
			values: Vars{"default_output_file": "/outputs/brief-{{project_name}}-{{date}}.md"},
		},
		{
			name: "variables mapping defines names",
			doc: `config_source: "{bundle-root}/mod/config.yaml"
variables:
  story_dir: "{config_source}:stories"
  epic_num: 3
default_output_file: "{story_dir}/epic-{epic_num}-{{story_key}}.md"
`,
			files:  cfg,
			values: Vars{"default_output_file": "/project/docs/stories/epic-3-{{story_key}}.md"},
		},
		{
			name: "fallback to a later alternative",
			doc: `config_source: "{bundle-root}/mod/config.yaml"
sprint_dir: "{config_source}:sprint_artifacts || {output_folder}/sprints"
stories: "{config_source}:stories || {output_folder}/stories"
who: "{config_source}:owner || {nobody} || someone"
`,
			files:  cfg,
			values: Vars{"sprint_dir": "/outputs/sprints", "stories": "/project/docs/stories", "who": "someone"},
		},
		{
			name:       "fallback with no resolvable alternative",
			doc:        "dir: \"{a} || {b}/x\"\n",
			values:     Vars{"dir": "{b}/x"},
			unresolved: []string{"b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.base
			if b == nil {
				b = base()
			}
			read, _ := configs(tt.files)
			w, err := ResolveWorkflow([]byte(tt.doc), b, read)
			if err != nil {
				t.Fatalf("ResolveWorkflow: %v", err)
			}
			for k, want := range tt.values {
				if got, ok := w.Values[k]; !ok || got != want {
					t.Errorf("Values[%q] = %q (present %v), want %q", k, got, ok, want)
				}
			}
			if !reflect.DeepEqual(w.Unresolved, tt.unresolved) {
				t.Errorf("Unresolved = %v, want %v", w.Unresolved, tt.unresolved)
			}
			if got := len(w.Notes) > 0; got != tt.notes {
				t.Errorf("Notes = %v, want notes: %v", w.Notes, tt.notes)
			}
			// The rendered document agrees with Values.
			var again map[string]any
			if err := yaml.Unmarshal([]byte(w.Resolved), &again); err != nil {
				t.Fatalf("Resolved does not parse: %v\n%s", err, w.Resolved)
			}
			for k, want := range tt.values {
				if s, ok := again[k].(string); ok && s != want {
					t.Errorf("Resolved %s = %q, want %q", k, s, want)
				}
			}
		})
	}
}

func TestResolveWorkflowFields(t *testing.T) {
	read, calls := configs(map[string]string{"/project/bmad/mod/config.yaml": moduleConfig})
	doc := `# demo workflow
name: demo
description: "A demo for {user_name}"
config_source: "{bundle-root}/mod/config.yaml"
user_name: "{config_source}:user_name"
communication_language: "{config_source}:communication_language"
project_name: "{config_source}:project_name"
installed_path: "{bundle-root}/mod/workflows/demo"
instructions: "{installed_path}/instructions.md"
template: false
validation: "{installed_path}/checklist.md"
flag: "{config_source}:flag || true"
inputs:
  - brief: "{output_folder}/brief.md"
  - list: ["{installed_path}/a.csv", "{{keep}}"]
patterns:
  prd:
    whole: "{output_folder}/*prd*.md"
`
	base := base()
	base["flag"] = "true"
	w, err := ResolveWorkflow([]byte(doc), base, read)
	if err != nil {
		t.Fatal(err)
	}
	if *calls != 1 {
		t.Errorf("readConfig called %d times, want once", *calls)
	}
	got := map[string]string{
		"Name": w.Name, "Description": w.Description, "Instructions": w.Instructions,
		"Template": w.Template, "Validation": w.Validation, "ConfigSource": w.ConfigSource,
	}
	want := map[string]string{
		"Name": "demo", "Description": "A demo for Cfg User",
		"Instructions": "/project/bmad/mod/workflows/demo/instructions.md", "Template": "",
		"Validation": "/project/bmad/mod/workflows/demo/checklist.md", "ConfigSource": "/project/bmad/mod/config.yaml",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields = %v\nwant %v", got, want)
	}
	if len(w.Unresolved) != 0 || len(w.Notes) != 0 {
		t.Errorf("Unresolved %v, Notes %v; want none", w.Unresolved, w.Notes)
	}

	// Key order is kept, nested values are resolved, types are kept.
	var keys []string
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(w.Resolved), &root); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(root.Content[0].Content); i += 2 {
		keys = append(keys, root.Content[0].Content[i].Value)
	}
	wantKeys := []string{"name", "description", "config_source", "user_name", "communication_language", "project_name",
		"installed_path", "instructions", "template", "validation", "flag", "inputs", "patterns"}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("keys = %v\nwant %v", keys, wantKeys)
	}
	var v struct {
		Template bool
		Flag     any
		Inputs   []map[string]any
		Patterns map[string]map[string]string
	}
	if err := yaml.Unmarshal([]byte(w.Resolved), &v); err != nil {
		t.Fatal(err)
	}
	if v.Template != false || v.Flag != "true" {
		t.Errorf("template %v, flag %#v: want bool false and the string \"true\"", v.Template, v.Flag)
	}
	if got := v.Inputs[0]["brief"]; got != "/outputs/brief.md" {
		t.Errorf("inputs[0].brief = %v", got)
	}
	if got := v.Inputs[1]["list"]; !reflect.DeepEqual(got, []any{"/project/bmad/mod/workflows/demo/a.csv", "{{keep}}"}) {
		t.Errorf("inputs[1].list = %v", got)
	}
	if got := v.Patterns["prd"]["whole"]; got != "/outputs/*prd*.md" {
		t.Errorf("patterns.prd.whole = %v", got)
	}
}

func TestResolveWorkflowNameFromWorkflowMapping(t *testing.T) {
	doc := "workflow:\n  id: x\n  name: \"Domain {kind}\"\n  description: About it\n"
	w, err := ResolveWorkflow([]byte(doc), Vars{"kind": "Research"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "Domain Research" || w.Description != "About it" {
		t.Fatalf("Name %q, Description %q", w.Name, w.Description)
	}
}

func TestResolveWorkflowMissingConfigNote(t *testing.T) {
	read := func(p string) (Vars, error) { return nil, errors.New("open " + p + ": no such file") }
	doc := "config_source: \"{project-root}/x/config.yaml\"\nuser_name: \"{config_source}:user_name\"\n"
	w, err := ResolveWorkflow([]byte(doc), base(), read)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Notes) != 1 || !strings.Contains(w.Notes[0], "/project/x/config.yaml") || !strings.Contains(w.Notes[0], "no such file") {
		t.Fatalf("Notes = %v", w.Notes)
	}
}

func TestResolveWorkflowErrors(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string // substrings of the error
		is        any      // an error type or value it must match
	}{
		{"self reference", "a: \"{a}\"\n", []string{"resolve a", "{a} -> {a}"}, new(*CycleError)},
		{"pair", "a: \"x{b}\"\nb: \"{a}y\"\n", []string{"resolve a", "{a} -> {b} -> {a}"}, new(*CycleError)},
		{"cycle reached from a nested value", "list:\n  - \"{a}\"\na: \"{b}\"\nb: \"{a}\"\n", []string{"resolve list[0]", "{a} -> {b} -> {a}"}, new(*CycleError)},
		{"config_source refers to itself", "config_source: \"{config_source}:path\"\nu: \"{config_source}:u\"\n", []string{"config_source"}, new(*CycleError)},
		{"bad YAML", "name: x\n  bad: indent\n", []string{"parse workflow.yaml", "line 2"}, nil},
		{"unclosed flow", "name: [a, b\n", []string{"parse workflow.yaml"}, nil},
		{"empty", "", []string{"empty"}, nil},
		{"only a comment", "# nothing\n", []string{"empty"}, nil},
		{"top level list", "- name: x\n", []string{"parse workflow.yaml", "a list"}, nil},
		{"top level scalar", "hello\n", []string{"parse workflow.yaml", "a single value"}, nil},
		{"duplicate key", "name: a\nname: b\n", []string{"line 2", `"name"`, "line 1"}, nil},
		{"duplicate in variables", "variables:\n  a: 1\n  a: 2\n", []string{"variables", `"a"`}, nil},
		{"blow-up", blowUp(), []string{"too large"}, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := ResolveWorkflow([]byte(tt.doc), base(), nil)
			if err == nil {
				t.Fatalf("ResolveWorkflow = %+v, want an error", w)
			}
			for _, s := range tt.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
			switch is := tt.is.(type) {
			case **CycleError:
				if !errors.As(err, is) {
					t.Errorf("error %v is not a *CycleError", err)
				}
			case error:
				if !errors.Is(err, is) {
					t.Errorf("error %v is not %v", err, is)
				}
			}
		})
	}
}

// blowUp is a workflow whose values double 40 times.
func blowUp() string {
	var b strings.Builder
	b.WriteString("v0: abcdefgh\n")
	for i := 1; i <= 40; i++ {
		p := "{v" + strconv.Itoa(i-1) + "}"
		b.WriteString("v" + strconv.Itoa(i) + ": \"" + p + p + "\"\n")
	}
	return b.String()
}

func TestResolveWorkflowReadsConfigOnlyWhenReferenced(t *testing.T) {
	read, calls := configs(map[string]string{"/project/c.yaml": moduleConfig})
	doc := "config_source: \"{project-root}/c.yaml\"\ninstructions: \"{project-root}/i.md\"\n"
	w, err := ResolveWorkflow([]byte(doc), base(), read)
	if err != nil {
		t.Fatal(err)
	}
	if *calls != 0 || w.ConfigSource != "/project/c.yaml" || len(w.Notes) != 0 {
		t.Fatalf("calls %d, ConfigSource %q, Notes %v", *calls, w.ConfigSource, w.Notes)
	}
	// Without a reader, references stay placeholders and a note says so.
	w, err = ResolveWorkflow([]byte(doc+"user_name: \"{config_source}:user_name\"\n"), base(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Values["user_name"] != "{user_name}" || len(w.Notes) != 1 || !reflect.DeepEqual(w.Unresolved, []string{"user_name"}) {
		t.Fatalf("user_name %q, Notes %v, Unresolved %v", w.Values["user_name"], w.Notes, w.Unresolved)
	}
}
