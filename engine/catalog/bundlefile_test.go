package catalog

import (
	"strings"
	"testing"
)

// specMulti is a multi-agent bundle written from the spec's data model
// (section 5.1), field for field.
const specMulti = `type: bundle
name: requirements-team
version: 1.2.0
description: Agents that turn ideas into requirements
author: Agent Orchestrator Team
created: 2025-10-05
agents:
  - id: alex
    name: Alex
    title: Requirements Analyst
    file: agents/alex.md
    entry_point: true
    description: Gathers requirements
  - id: casey
    name: Casey
    title: Technical Writer
    file: agents/casey.md
    entry_point: false
resources:
  workflows: workflows/
  templates: templates/
  config: config.yaml
core_dependencies:
  - core/tasks/workflow.md
`

// specStandalone is a standalone bundle written from the same section.
const specStandalone = `type: standalone
name: solo-coach
version: 0.1.0
description: One coach
agent:
  id: coach
  name: Sam
  title: Coach
  file: agents/coach.md
resources:
  config: settings.yaml
`

// The section 5.1 shapes load as written: multi-agent and standalone, the
// resources map (config named there), a YAML date, core dependencies as
// paths, and unknown keys ignored.
func TestSpecBundlesLoad(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"requirements-team/bundle.yaml":     specMulti + "x-future-key: {nested: true}\n",
		"requirements-team/agents/alex.md":  agentMD("alex"),
		"requirements-team/agents/casey.md": agentMD("casey"),
		"requirements-team/config.yaml":     "user_name: Ana\n",
		"requirements-team/workflows/.keep": "",
		"requirements-team/templates/t.md":  "# T\n",
		"solo-coach/bundle.yaml":            specStandalone,
		"solo-coach/agents/coach.md":        agentMD("coach"),
		"solo-coach/settings.yaml":          "user_name: Sol\n",
	})
	c := Load(Options{Bundles: []string{dir}})
	if len(c.Problems) != 0 {
		t.Fatalf("problems: %+v", c.Problems)
	}
	alex, ok := c.Find("alex")
	if !ok || !alex.EntryPoint || alex.Home.Config["user_name"] != "Ana" {
		t.Fatalf("alex: %+v", alex)
	}
	if casey, ok := c.Find("casey"); !ok || casey.EntryPoint {
		t.Fatalf("casey: %+v", casey)
	}
	coach, ok := c.Find("coach")
	if !ok || !coach.EntryPoint || coach.Name != "Sam" || coach.Home.Config["user_name"] != "Sol" {
		t.Fatalf("coach (config from resources.config): %+v %+v", coach, coach.Home)
	}
}

// Each bad optional field on its own is a warning with the bundle's path
// and the reason; the bundle's agents still load. Only a bundle with no
// usable agent is rejected.
func TestSpecBundleBadFields(t *testing.T) {
	cases := []struct {
		name, edit, want string
		loads            bool
	}{
		{"resources as text", "resources: workflows\n", "resources: want a mapping", true},
		{"resource path missing", "resources:\n  workflows: nowhere/\n", `resources.workflows: "nowhere/" does not exist`, true},
		{"resource outside", "resources:\n  templates: ../../etc\n", "is outside the bundle", true},
		{"resource not a path", "resources:\n  templates: [a, b]\n", "resources.templates: want a path", true},
		{"config missing", "resources:\n  config: missing.yaml\n", `resources.config: "missing.yaml" does not exist`, true},
		{"core deps as map", "core_dependencies: {a: b}\n", "core_dependencies: want a list of paths", true},
		{"core dep missing", "core_dependencies: [core/tasks/nope.md]\n", `core_dependencies: "core/tasks/nope.md" is neither`, true},
		{"created as list", "created: [2025]\n", "created: want a text", true},
		{"version as map", "version: {major: 1}\n", "version: want a text", true},
		{"author as list", "author: [a]\n", "author: want a text", true},
		{"one bad agent entry", "agents:\n  - id: ok\n    file: agents/ok.md\n  - [not, a, mapping]\n", "agents[1]:", true},
		{"agents as text", "agents: everyone\n", "agents: want a list", false},
		{"no usable agent", "agents:\n  - [x]\n", "agents: no entry can be read", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			base := "type: bundle\nname: b\nagents:\n  - id: ok\n    file: agents/ok.md\n    entry_point: true\n"
			doc := base
			if strings.HasPrefix(c.edit, "agents") {
				doc = "type: bundle\nname: b\n"
			}
			writeFiles(t, dir, map[string]string{"b/bundle.yaml": doc + c.edit, "b/agents/ok.md": agentMD("ok")})
			cat := Load(Options{Bundles: []string{dir}})
			if !findProblem(cat, "bundle.yaml", c.want) {
				t.Fatalf("no problem %q: %+v", c.want, cat.Problems)
			}
			if _, ok := cat.Find("ok"); ok != c.loads {
				t.Fatalf("agent loads = %v, want %v (problems %+v)", ok, c.loads, cat.Problems)
			}
		})
	}
}
