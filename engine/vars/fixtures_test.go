package vars

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"agentbot/engine/fixtures"
)

// projectReader reads config files of the virtual /project from root.
func projectReader(root string) func(string) (Vars, error) {
	return func(p string) (Vars, error) {
		rel, ok := strings.CutPrefix(p, "/project/")
		if !ok {
			return nil, errors.New("outside /project: " + p)
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, err
		}
		return ParseConfig(data)
	}
}

func TestFixtureWorkflows(t *testing.T) {
	project := fixtures.Dir(t, fixtures.Alpha5)
	base := Vars{
		"project-root":  "/project",
		"bundle-root":   "/project/bmad",
		"core-root":     "/core",
		"output_folder": "/outputs",
		"date":          "2026-01-02",
	}
	var files []string
	err := filepath.WalkDir(filepath.Join(project, "bmad"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "workflow.yaml" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 40 {
		t.Fatalf("found only %d workflow.yaml files under %s", len(files), project)
	}
	byName := map[string]*Workflow{}
	for _, f := range files {
		rel, _ := filepath.Rel(project, f)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			w, err := ResolveWorkflow(data, base, projectReader(project))
			if err != nil {
				t.Fatalf("ResolveWorkflow: %v", err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal([]byte(w.Resolved), &doc); err != nil {
				t.Fatalf("Resolved is not YAML: %v", err)
			}
			if strings.Contains(w.Resolved, "{config_source}") || strings.Contains(w.Resolved, "{project-root}") {
				t.Errorf("Resolved keeps {config_source} or {project-root}:\n%s", w.Resolved)
			}
			if w.Values["output_folder"] != "" && w.Values["output_folder"] != "/outputs" {
				t.Errorf("output_folder = %q, want /outputs", w.Values["output_folder"])
			}
			if w.Values["date"] != "" && w.Values["date"] != "2026-01-02" {
				t.Errorf("date = %q", w.Values["date"])
			}
			if strings.Contains(rel, "workflow-template") {
				// A template for new workflows: its config_source is
				// "{project-root}/{module-code}/config.yaml", so the config
				// cannot be read and its keys stay for the model.
				if len(w.Notes) == 0 || !slices.Contains(w.Unresolved, "module-code") || !slices.Contains(w.Unresolved, "user_name") {
					t.Errorf("template workflow: Notes %v, Unresolved %v", w.Notes, w.Unresolved)
				}
			} else {
				if len(w.Notes) > 0 {
					t.Errorf("Notes = %v", w.Notes)
				}
				if w.Values["user_name"] != "" && w.Values["user_name"] != "BMad" {
					t.Errorf("user_name = %q, want BMad", w.Values["user_name"])
				}
				if slices.Contains(w.Unresolved, "user_name") || slices.Contains(w.Unresolved, "config_source") {
					t.Errorf("Unresolved = %v", w.Unresolved)
				}
			}
			if w.Instructions != "" && !strings.HasPrefix(w.Instructions, "/project/") {
				t.Errorf("Instructions = %q", w.Instructions)
			}
			if w.Name == "" {
				t.Errorf("no name")
			}
			byName[filepath.ToSlash(rel)] = w
		})
	}

	w := byName["bmad/bmm/workflows/1-analysis/product-brief/workflow.yaml"]
	if w == nil {
		t.Fatal("product-brief workflow not resolved")
	}
	checks := map[string][2]string{
		"Instructions":        {w.Instructions, "/project/bmad/bmm/workflows/1-analysis/product-brief/instructions.md"},
		"Template":            {w.Template, "/project/bmad/bmm/workflows/1-analysis/product-brief/template.md"},
		"ConfigSource":        {w.ConfigSource, "/project/bmad/bmm/config.yaml"},
		"output_folder":       {w.Values["output_folder"], "/outputs"},
		"user_name":           {w.Values["user_name"], "BMad"},
		"date":                {w.Values["date"], "2026-01-02"},
		"default_output_file": {w.Values["default_output_file"], "/outputs/product-brief-{{project_name}}-{{date}}.md"},
	}
	for k, c := range checks {
		if c[0] != c[1] {
			t.Errorf("product-brief %s = %q, want %q", k, c[0], c[1])
		}
	}
	if len(w.Unresolved) != 0 || len(w.Notes) != 0 {
		t.Errorf("product-brief Unresolved %v, Notes %v", w.Unresolved, w.Notes)
	}
	// A workflow that references names its config lacks still resolves,
	// listing them.
	if cs := byName["bmad/bmm/workflows/4-implementation/create-story/workflow.yaml"]; cs != nil {
		if got := cs.Values["default_output_file"]; got != "/project/docs/stories/{{story_key}}.md" {
			t.Errorf("create-story default_output_file = %q", got)
		}
	}
}
