package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"agentbot/engine/vars"
)

// A skill loaded with SetBase makes bare paths and {skill-root} resolve in
// its folder first; other relative paths still reach /project and /outputs.
func TestSetBaseResolvesSkillPaths(t *testing.T) {
	e := newEnv(t, nil)
	writeHost(t, filepath.Join(e.project, ".claude/skills/bmad-prd/references/validate.md"), "validate me")
	writeHost(t, filepath.Join(e.project, "references/validate.md"), "the project's own")
	if data, _, err := e.sb.ReadFile("references/validate.md"); err != nil || string(data) != "the project's own" {
		t.Fatalf("before SetBase: %q, %v", data, err)
	}
	e.sb.SetBase("/project/.claude/skills/bmad-prd", vars.Vars{"skill-root": "/project/.claude/skills/bmad-prd"})
	for _, p := range []string{"references/validate.md", "./references/validate.md", "{skill-root}/references/validate.md"} {
		data, virtual, err := e.sb.ReadFile(p)
		if err != nil || string(data) != "validate me" || virtual != "/project/.claude/skills/bmad-prd/references/validate.md" {
			t.Errorf("%s: %q at %s, %v", p, data, virtual, err)
		}
	}
	if data, _, err := e.sb.ReadFile("agents/pm.md"); err != nil || string(data) != "# pm agent\n" {
		t.Errorf("project file after SetBase: %q, %v", data, err)
	}
	if _, err := e.sb.WriteFile("notes.md", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if data, virtual, err := e.sb.ReadFile("notes.md"); err != nil || virtual != "/outputs/notes.md" || string(data) != "x" {
		t.Errorf("output read-back after SetBase: %q at %s, %v", data, virtual, err)
	}
	_, _, err := e.sb.ReadFile("../../../../etc/passwd")
	refused(t, e, err, "escapes")
}

// An output alias (BMAD's _bmad-output) is this session's /outputs for
// reads and writes; ".." cannot climb out of it.
func TestOutputAlias(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.OutputAliases = []string{"/project/_bmad-output"} })
	v, err := e.sb.WriteFile("/project/_bmad-output/planning-artifacts/prd.md", []byte("# PRD"))
	if err != nil || v != "/outputs/planning-artifacts/prd.md" {
		t.Fatalf("write through alias: %s, %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(e.outputs, "planning-artifacts", "prd.md")); err != nil {
		t.Fatalf("not written under the session's outputs: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.project, "_bmad-output")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the project was written to: %v", err)
	}
	data, _, err := e.sb.ReadFile("/project/_bmad-output/planning-artifacts/prd.md")
	if err != nil || string(data) != "# PRD" {
		t.Fatalf("read through alias: %q, %v", data, err)
	}
	_, err = e.sb.WriteFile("/project/_bmad-output/../agents/pm.md", []byte("x"))
	refused(t, e, err, "")
	if got, _ := os.ReadFile(filepath.Join(e.project, "agents/pm.md")); string(got) != "# pm agent\n" {
		t.Fatal("a write through the alias reached the project")
	}
	// A longer name that only starts like the alias is not the alias.
	if _, err := e.sb.WriteFile("/project/_bmad-output2/x.md", []byte("x")); err == nil {
		t.Fatal("a write to /project/_bmad-output2 was allowed")
	}
}

// Glob finds files by pattern under every mount, with ** and variables,
// never outside the roots.
func TestGlob(t *testing.T) {
	e := newEnv(t, nil)
	for _, p := range []string{"prds/prd-a-2026-01-01/prd.md", "prds/prd-b-2026-02-01/prd.md", "prds/prd-b-2026-02-01/.memlog.md", "brief.md"} {
		if _, err := e.sb.WriteFile(p, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		pattern string
		want    []string
	}{
		{"/outputs/prds/*/prd.md", []string{"/outputs/prds/prd-a-2026-01-01/prd.md", "/outputs/prds/prd-b-2026-02-01/prd.md"}},
		{"{output_folder}/prds/prd-b-*/.memlog.md", []string{"/outputs/prds/prd-b-2026-02-01/.memlog.md"}},
		{"/outputs/**/*.md", []string{"/outputs/brief.md", "/outputs/prds/prd-a-2026-01-01/prd.md", "/outputs/prds/prd-b-2026-02-01/.memlog.md", "/outputs/prds/prd-b-2026-02-01/prd.md"}},
		{"/outputs/prds/*", []string{"/outputs/prds/prd-a-2026-01-01/", "/outputs/prds/prd-b-2026-02-01/"}},
		{"workflows/*/workflow.yaml", []string{"/project/workflows/prd/workflow.yaml"}},
		{"/project/agents/*.md", []string{"/project/agents/architect.md", "/project/agents/pm.md"}},
		{"/outputs/nothing/*.md", []string{}},
		{"/outputs/brief.md", []string{"/outputs/brief.md"}},
	}
	for _, c := range cases {
		got, err := e.sb.Glob(c.pattern)
		if err != nil {
			t.Errorf("%s: %v", c.pattern, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %q, want %q", c.pattern, got, c.want)
		}
	}
	for _, bad := range []string{"/etc/*", "/project/../../*", "/outputs/../../**"} {
		got, err := e.sb.Glob(bad)
		if err == nil {
			t.Errorf("%s: no error, got %q", bad, got)
			continue
		}
		refused(t, e, err, "")
	}
}

// The shared skills folder is mounted read-only at /skills.
func TestSkillsMount(t *testing.T) {
	dir := t.TempDir()
	writeHost(t, filepath.Join(dir, "review/SKILL.md"), "---\nname: review\n---\n")
	e := newEnv(t, func(c *Config) { c.SkillsRoot = dir })
	data, _, err := e.sb.ReadFile("/skills/review/SKILL.md")
	if err != nil || !strings.Contains(string(data), "name: review") {
		t.Fatalf("read /skills: %q, %v", data, err)
	}
	_, err = e.sb.WriteFile("/skills/review/SKILL.md", []byte("x"))
	refused(t, e, err, "read-only")
}
