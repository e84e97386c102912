package engine

import (
	"strings"
	"testing"
	"time"

	"agentbot/engine/custom"
	"agentbot/engine/vars"
)

// FuzzSkillPlaceholders feeds arbitrary SKILL.md text and customization
// values through the runtime's placeholder resolution: flattening a
// [workflow] table, resolving {workflow.X}, config keys and nested
// references in the text and in the table, and finding the files an "On
// Activation" section names. It must never panic or hang, and resolved
// text must keep every {{double}} placeholder and run-time name it had.
func FuzzSkillPlaceholders(f *testing.F) {
	f.Add("## On Activation\nLoad `references/a.md` and {skill-root}/steps/s1.md; bind {doc_workspace} to {workflow.out}/{workflow.run}.\n", "{planning_artifacts}/prds", "prd-{project_name}-{date}")
	f.Add("{workflow.a}{workflow.b}{{x}}", "{workflow.b}", "{workflow.a}")
	f.Add("## On Activation\n`./x/../../y.md` {project-root}/_bmad/bmm/config.yaml", "A || {missing} || B", "{{{{}}}}")
	f.Add(strings.Repeat("{workflow.a}", 200), strings.Repeat("{workflow.b}", 50), strings.Repeat("x", 1000))
	f.Fuzz(func(t *testing.T, body, a, b string) {
		table := custom.Table{"a": a, "b": b, "out": a, "run": b, "list": []any{a, b, map[string]any{"code": a, "v": b}}, "n": int64(3)}
		v := vars.Vars{"project-root": "/project", "skill-root": "/project/s", "planning_artifacts": "/outputs/p", "project_name": "x", "date": "2026-11-21"}
		fields := map[string]string{}
		custom.Flatten("workflow", table, fields)
		for k, val := range fields {
			v[k] = val
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			out, unknown := vars.ExpandPartial(body, v)
			if strings.Contains(body, "{doc_workspace}") && !strings.Contains(out, "{doc_workspace}") {
				t.Errorf("the run-time name {doc_workspace} was substituted: %q", out)
			}
			for _, u := range unknown {
				if u == "" {
					t.Error("an empty unknown name")
				}
			}
			_ = expandTable(table, v)
			for _, p := range activationFiles(body) {
				if p == "" || strings.HasSuffix(p, ".py") {
					t.Errorf("activation file %q", p)
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("placeholder resolution hangs")
		}
	})
}
