package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// toolCall is a scripted call of tool with args.
func toolCall(tool string, args map[string]string) fakemodel.ToolCall {
	b, _ := json.Marshal(args)
	return fakemodel.ToolCall{Name: tool, Arguments: string(b)}
}

// lastToolResults are the tool results of the model's latest request.
func lastToolResults(fm *fakemodel.Server) []string {
	reqs := fm.Requests()
	var out []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// Successive terminal sessions build on each other: the analyst's brief is
// the PM's to read in the data folder's terminal project; another
// project answers for it as for a missing file. projects list and show
// name the document, its version and its agent.
func TestChatProjectsBuildOnEachOther(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["AGENTBOT_BUNDLES"] = ""
	vars["AGENTBOT_BMAD_ROOT"] = fixtures.Copy(t, fixtures.V612)
	vars["USER"] = "ana"
	fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{toolCall("save_output", map[string]string{"path": "{planning_artifacts}/product-brief.md", "content": "# Brief\nbikes"})}},
		fakemodel.Reply{Text: "saved"},
	)
	runCmd(t, vars, "write the brief\n", "chat", "--agent", "analyst").wantCode(t, 0)

	probe := []fakemodel.ToolCall{
		toolCall("read_file", map[string]string{"path": "{planning_artifacts}/product-brief.md"}),
		toolCall("read_file", map[string]string{"path": "{planning_artifacts}/never-written.md"}),
	}
	fm.Enqueue(fakemodel.Reply{ToolCalls: probe}, fakemodel.Reply{Text: "read"})
	runCmd(t, vars, "read the brief\n", "chat", "--agent", "pm").wantCode(t, 0)
	res := lastToolResults(fm)
	contains(t, "the PM's read", res[0], "bikes")

	fm.Enqueue(fakemodel.Reply{ToolCalls: probe}, fakemodel.Reply{Text: "read"})
	runCmd(t, vars, "read the brief\n", "chat", "--agent", "pm", "--project", "other").wantCode(t, 0)
	res = lastToolResults(fm)
	lacks(t, "another project's read", res[0], "bikes")
	if want := strings.ReplaceAll(res[1], "never-written.md", "product-brief.md"); res[0] != want {
		t.Fatalf("another project's document answers\n%s\nnot as a missing one:\n%s", res[0], res[1])
	}

	r := runCmd(t, vars, "", "projects", "list")
	r.wantCode(t, 0)
	contains(t, "projects list", r.stdout, "terminal")
	contains(t, "projects list", r.stdout, "planning-artifacts/product-brief.md v1 by ana with analyst")
	r = runCmd(t, vars, "", "projects", "show", "terminal")
	r.wantCode(t, 0)
	contains(t, "projects show", r.stdout, "planning-artifacts/product-brief.md  1")
}

// Export writes the latest versions in the _bmad-output layout, import
// seeds another project from it, and exporting that gives identical files;
// --all-versions adds the history.
func TestProjectsExportImportRoundTrip(t *testing.T) {
	vars := map[string]string{"AGENTBOT_DATA": filepath.Join(t.TempDir(), "data")}
	seed := t.TempDir()
	files := map[string]string{
		"planning-artifacts/prd.md":                   "# PRD\n",
		"planning-artifacts/architecture.md":          "# Architecture\n",
		"implementation-artifacts/stories/story-1.md": "story one\n",
		"implementation-artifacts/sprint-status.yaml": "sprint: 1\n",
		"brainstorming/.memlog.md":                    "---\nupdated: 2026-01-01T00:00\n---\n",
	}
	for p, body := range files {
		full := filepath.Join(seed, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := runCmd(t, vars, "", "projects", "import", "checkout", seed)
	r.wantCode(t, 0)
	contains(t, "import", r.stdout, "imported 5 documents")
	// Importing the same folder again adds nothing.
	runCmd(t, vars, "", "projects", "import", "checkout", seed).wantCode(t, 0)

	out1, out2 := filepath.Join(t.TempDir(), "_bmad-output"), filepath.Join(t.TempDir(), "_bmad-output")
	runCmd(t, vars, "", "projects", "export", "checkout", out1).wantCode(t, 0)
	runCmd(t, vars, "", "projects", "import", "copy", out1).wantCode(t, 0)
	runCmd(t, vars, "", "projects", "export", "copy", out2).wantCode(t, 0)
	for _, dir := range []string{out1, out2} {
		got := readTree(t, dir)
		if len(got) != len(files) {
			t.Fatalf("%s holds %d files, want %d: %v", dir, len(got), len(files), got)
		}
		for p, body := range files {
			if got[p] != body {
				t.Fatalf("%s/%s = %q, want %q", dir, p, got[p], body)
			}
		}
	}
	// A second version, then the history.
	if err := os.WriteFile(filepath.Join(seed, "planning-artifacts", "prd.md"), []byte("# PRD v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCmd(t, vars, "", "projects", "import", "checkout", seed).wantCode(t, 0)
	hist := filepath.Join(t.TempDir(), "out")
	runCmd(t, vars, "", "projects", "export", "--all-versions", "checkout", hist).wantCode(t, 0)
	got := readTree(t, hist)
	if got["planning-artifacts/prd.md"] != "# PRD v2\n" || got[".history/planning-artifacts/prd.v1.md"] != "# PRD\n" || got[".history/planning-artifacts/prd.v2.md"] != "# PRD v2\n" {
		t.Fatalf("export with history: %v", got)
	}
	if r := runCmd(t, vars, "", "projects", "export", "nope", t.TempDir()); r.code != 1 || !strings.Contains(r.stderr, "not found") {
		t.Fatalf("export of a missing project: %+v", r)
	}
	if r := runCmd(t, vars, "", "projects", "show"); r.code != 2 || !strings.Contains(r.stderr, "usage: agentbot projects") {
		t.Fatalf("show without a name: %+v", r)
	}
}

// readTree reads every file under dir, by slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The folder a saved document's path shows (…/projects/<folder>/documents/…)
// names its project to projects show and export, as its name does.
func TestProjectsFoundByTheSavedPathsFolder(t *testing.T) {
	_, vars, chat := briefChat(t)
	m := regexp.MustCompile(`✓ saved \S+ \(\d+ bytes, v\d+\) at .*/projects/([^/]+)/documents/`).FindStringSubmatch(chat.stdout)
	if m == nil {
		t.Fatalf("no save line with a project folder:\n%s", chat.stdout)
	}
	r := runCmd(t, vars, "", "projects", "show", m[1])
	r.wantCode(t, 0)
	contains(t, "projects show "+m[1], r.stdout, "Project:   terminal\n")
	contains(t, "projects show "+m[1], r.stdout, "product-brief.md")
	dir := t.TempDir()
	r = runCmd(t, vars, "", "projects", "export", m[1], dir)
	r.wantCode(t, 0)
	contains(t, "projects export "+m[1], r.stdout, "of project terminal to "+dir)
}
