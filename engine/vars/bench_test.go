package vars

import "testing"

// benchVars are session variables as the sandbox holds them.
var benchVars = Vars{
	"project-root":   "/project",
	"bundle-root":    "/project/bmad",
	"core-root":      "/core",
	"output_folder":  "/outputs",
	"input_folder":   "/inputs",
	"installed_path": "1-analysis/product-brief",
	"user_name":      "Ada",
	"date":           "2026-01-02",
}

const benchPath = "{project-root}/bmad/bmm/workflows/x/{installed_path}/instructions.md"

// BenchmarkExpand is the hot path of sandbox path resolution.
func BenchmarkExpand(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand(benchPath, benchVars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpandNested expands a value that refers to other values.
func BenchmarkExpandNested(b *testing.B) {
	v := Vars{}
	for k, val := range benchVars {
		v[k] = val
	}
	v["installed_path"] = "{bundle-root}/bmm/workflows/{phase}/product-brief"
	v["phase"] = "1-analysis"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand(benchPath, v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExpandNoVars is a path without variables.
func BenchmarkExpandNoVars(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Expand("/project/bmad/bmm/workflows/x/instructions.md", benchVars); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveWorkflow resolves a workflow.yaml of typical size.
func BenchmarkResolveWorkflow(b *testing.B) {
	doc := []byte(`name: demo
description: "A demo workflow"
config_source: "{bundle-root}/mod/config.yaml"
output_folder: "{config_source}:output_folder"
user_name: "{config_source}:user_name"
communication_language: "{config_source}:communication_language"
date: system-generated
installed_path: "{bundle-root}/mod/workflows/demo"
template: "{installed_path}/template.md"
instructions: "{installed_path}/instructions.md"
validation: "{installed_path}/checklist.md"
default_output_file: "{output_folder}/demo-{{project_name}}-{{date}}.md"
input_file_patterns:
  prd:
    whole: "{output_folder}/*prd*.md"
    sharded: "{output_folder}/*prd*/index.md"
standalone: true
`)
	cfg, err := ParseConfig([]byte(moduleConfig))
	if err != nil {
		b.Fatal(err)
	}
	read := func(string) (Vars, error) { return cfg, nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ResolveWorkflow(doc, benchVars, read); err != nil {
			b.Fatal(err)
		}
	}
}
