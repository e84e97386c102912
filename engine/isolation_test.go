package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// Run inside the project, as a team would: the data folder is ./data in
// the bundle. Bob's session cannot read Alice's document or the project's
// .env, and a config value that is a host path reaches the model as its
// /project path, never as the host path.
func TestSessionIsolationEndToEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "team")
	src := filepath.Join(fixtures.Bundles(t), "product-team")
	fixtures.CopyDir(t, src, bundle)
	cfg, _ := os.ReadFile(filepath.Join(bundle, "config.yaml"))
	cfg = append(cfg, []byte("docs_dir: "+filepath.Join(bundle, "workflows")+"\nother_dir: /etc/agentbot-secrets\n")...)
	write(t, bundle, "config.yaml", string(cfg))
	write(t, bundle, ".env", "OPENAI_API_KEY=sk-live-secret\n")
	data := filepath.Join(bundle, "data")
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fm := fakemodel.NewTB(t)
	cat := catalog.Load(catalog.Options{Bundles: []string{bundle}})
	eng := engine.New(engine.Config{
		Catalog: func() *catalog.Catalog { return cat },
		Model:   model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m"}),
		Store:   st, Hidden: []string{data},
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
		InputRoot:  func(id string) string { d, _ := st.InputDir(id); return d },
	})
	a, ok := cat.Find("product-lead")
	if !ok {
		t.Fatalf("agent missing: %+v", cat.Problems)
	}
	alice, _ := live(st.NewSession(ctx, "alice"))
	if _, err := eng.Activate(context.Background(), alice, a); err != nil {
		t.Fatal(err)
	}
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "secret-plan.md", "content": "alice's plan"})}}, fakemodel.Reply{Text: "saved"})
	if _, err := eng.Turn(t.Context(), alice, "save it", nil); err != nil {
		t.Fatal(err)
	}
	bob, _ := live(st.NewSession(ctx, "bob"))
	if _, err := eng.Activate(context.Background(), bob, a); err != nil {
		t.Fatal(err)
	}
	aliceDoc := "/project/data/outputs/" + alice.ID + "/secret-plan.md"
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
		call("read_file", map[string]string{"path": aliceDoc}),
		call("read_file", map[string]string{"path": "/project/.env"}),
		call("list_files", map[string]string{"glob": "/project/**/secret-plan.md"}),
	}}, fakemodel.Reply{Text: "nothing"})
	if _, err := eng.Turn(t.Context(), bob, "read alice's plan", nil); err != nil {
		t.Fatal(err)
	}
	reqs := fm.Requests()
	res := toolResults(t, reqs[len(reqs)-1])
	if e, _ := res[0]["error"].(string); e == "" || strings.Contains(strings.Join(flat(res), " "), "alice's plan") {
		t.Fatalf("bob read alice's document: %v", res[0])
	}
	if e, _ := res[1]["error"].(string); !strings.Contains(e, "denied by policy") {
		t.Fatalf(".env: %v", res[1])
	}
	if files, _ := res[2]["files"].([]any); len(files) != 0 {
		t.Fatalf("list_files shows %v", files)
	}
	sp := bob.Messages[0].Content
	contains(t, sp, "- {docs_dir} = /project/workflows", "host-path config value as its /project path")
	contains(t, sp, "- {other_dir} = (a folder outside", "unreachable host path hidden")
	for _, r := range reqs {
		raw := string(r.Raw)
		if strings.Contains(raw, dir) || strings.Contains(raw, "sk-live-secret") || strings.Contains(raw, "/etc/agentbot-secrets") {
			t.Fatalf("request %d leaks a host path or the key", r.N)
		}
	}
}

func flat(rs []map[string]any) []string {
	var out []string
	for _, r := range rs {
		for _, v := range r {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// pathTrick builds a hostile path to one of another project's files.
type pathTrick struct {
	name string
	path func(v trickTarget) string
}

// trickTarget is a file of another project as the tricks aim at it.
type trickTarget struct {
	project  string // project name ("channel/T1/C2")
	doc      string // its path in the working copy, from the data folder ("projects/…/documents/roadmap.md")
	name     string // the file's name ("roadmap.md")
	data     string // the data folder, host path
	root     string // the BMAD root, host path
	session  string // the id of the session of the other project that wrote it
	knowFrom string // project_knowledge folder name under the root ("docs")
}

// pathTricks are the hostile paths TestPathTricksAcrossProjects tries:
// every way a model could name another project's file through the folders
// it sees, its variables, encodings, lookalikes and links.
var pathTricks = []pathTrick{
	{"the data folder under /project", func(v trickTarget) string { return "/project/data/" + v.doc }},
	{"the data folder, relative", func(v trickTarget) string { return "data/" + v.doc }},
	{"the data folder's host path", func(v trickTarget) string { return v.data + "/" + v.doc }},
	{"file:// URL of the host path", func(v trickTarget) string { return "file://" + v.data + "/" + v.doc }},
	{"/proc/self/root and the host path", func(v trickTarget) string { return "/proc/self/root" + v.data + "/" + v.doc }},
	{"/outputs/../project", func(v trickTarget) string { return "/outputs/../project/data/" + v.doc }},
	{"/outputs/../../ to the host path", func(v trickTarget) string { return "/outputs/../.." + v.data + "/" + v.doc }},
	{"forty ../", func(v trickTarget) string { return strings.Repeat("../", 40) + v.data[1:] + "/" + v.doc }},
	{"/inputs/../../", func(v trickTarget) string { return "/inputs/../../project/data/" + v.doc }},
	{"/inputs/../outputs/../project", func(v trickTarget) string { return "/inputs/../outputs/../project/data/" + v.doc }},
	{"/core/../project", func(v trickTarget) string { return "/core/../project/data/" + v.doc }},
	{"/skills/../project", func(v trickTarget) string { return "/skills/../project/data/" + v.doc }},
	{"../ out of /project and back in", func(v trickTarget) string { return "../" + filepath.Base(v.root) + "/data/" + v.doc }},
	{"{output_folder}/../", func(v trickTarget) string { return "{output_folder}/../data/" + v.doc }},
	{"{project-root}", func(v trickTarget) string { return "{project-root}/data/" + v.doc }},
	{"{planning_artifacts}/../../", func(v trickTarget) string { return "{planning_artifacts}/../../data/" + v.doc }},
	{"{project_knowledge}/../", func(v trickTarget) string { return "{project_knowledge}/../data/" + v.doc }},
	{"_bmad-output alias then ..", func(v trickTarget) string { return "/project/_bmad-output/../data/" + v.doc }},
	{"/./ and ./ segments", func(v trickTarget) string { return "/./project/./data/./" + v.doc }},
	{"doubled slashes", func(v trickTarget) string { return "/project//data//" + strings.ReplaceAll(v.doc, "/", "//") }},
	{"trailing slash", func(v trickTarget) string { return "/project/data/" + v.doc + "/" }},
	{"trailing /.", func(v trickTarget) string { return "/project/data/" + v.doc + "/." }},
	{"leading and trailing blanks", func(v trickTarget) string { return " /project/data/" + v.doc + " " }},
	{"backslashes", func(v trickTarget) string { return `\project\data\` + strings.ReplaceAll(v.doc, "/", `\`) }},
	{"percent-encoded slashes", func(v trickTarget) string { return "/project/data/" + strings.ReplaceAll(v.doc, "/", "%2F") }},
	{"percent-encoded dots", func(v trickTarget) string { return "/outputs/%2e%2e/project/data/" + v.doc }},
	{"double-encoded dots", func(v trickTarget) string { return "/outputs/%252e%252e/project/data/" + v.doc }},
	{"NUL after the name", func(v trickTarget) string { return "/project/data/" + v.doc + "\x00.md" }},
	{"NUL then ..", func(v trickTarget) string { return "/outputs/x\x00/../../project/data/" + v.doc }},
	{"Cyrillic a in data", func(v trickTarget) string { return "/project/d\u0430ta/" + v.doc }},
	{"fullwidth solidus", func(v trickTarget) string { return "/project\uff0fdata\uff0f" + v.doc }},
	{"one-dot leaders for ..", func(v trickTarget) string { return "/outputs/\u2024\u2024/project/data/" + v.doc }},
	{"upper case", func(v trickTarget) string { return "/PROJECT/DATA/" + v.doc }},
	{"a glob for the project folder", func(v trickTarget) string {
		return "/project/data/projects/*/" + strings.SplitN(v.doc, "/", 3)[2]
	}},
	{"projects/../projects", func(v trickTarget) string { return "/project/data/projects/../" + v.doc }},
	{"the working copy under /outputs", func(v trickTarget) string { return "/outputs/" + v.doc }},
	{"the other project's name under /outputs", func(v trickTarget) string { return "/outputs/" + v.project + "/" + v.name }},
	{"the other project's name after /outputs/..", func(v trickTarget) string { return "/outputs/../" + v.project + "/" + v.name }},
	{"the other session's old folder", func(v trickTarget) string { return "/project/data/outputs/" + v.session + "/" + v.name }},
	{"the bare name, relative", func(v trickTarget) string { return v.name }},
	{"the bare name in /outputs", func(v trickTarget) string { return "/outputs/" + v.name }},
	{"the bare name in /inputs", func(v trickTarget) string { return "/inputs/" + v.name }},
	{"a link in the BMAD root to the data folder", func(v trickTarget) string { return "/project/shortcut/" + v.doc }},
	{"a link in _bmad-output to the data folder", func(v trickTarget) string { return "/outputs/data-link/" + v.doc }},
	{"a link in project_knowledge to the working copy", func(v trickTarget) string {
		return "/project/" + v.knowFrom + "/wc-link/" + strings.SplitN(v.doc, "/", 3)[2]
	}},
}

// 45 path tricks across two projects: a thread of channel C1 (project A)
// tries each on the documents and shared files of channel C2 and of a DM
// (projects B), with the data folder inside the BMAD root (./data of a team
// running agentbot from its repository) and links to it in the root, in
// _bmad-output and in docs, with project_knowledge "docs" and "." (the
// whole root a base layer). Every read_file
// fails with a short error naming no host path; every save_output is
// refused the same way or lands in A's own documents; B's files are
// unchanged, in the store and on disk.
func TestPathTricksAcrossProjects(t *testing.T) {
	for _, knowledge := range []string{"{project-root}/docs", "{project-root}/."} {
		t.Run("project_knowledge "+knowledge, func(t *testing.T) { pathTricksAcrossProjects(t, knowledge) })
	}
}

// pathTricksAcrossProjects is TestPathTricksAcrossProjects with one
// project_knowledge setting.
func pathTricksAcrossProjects(t *testing.T, knowledge string) {
	ctx := context.Background()
	h, root, data := dataInRoot(t, "data", knowledge)
	mkdirs := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	alice, carol := seedOtherProjects(h)
	if err := h.eng.KeepInput(context.Background(), carol, "U-carol", "budget.csv", []byte("C2-BUDGET-5521")); err != nil {
		t.Fatal(err)
	}
	folders := storage.Folders{Dir: data}
	dm, c2 := storage.ChannelProject("T1", "D1"), storage.ChannelProject("T1", "C2")
	wcRel := func(p string) string {
		r, err := filepath.Rel(data, folders.ProjectFolder(p))
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	mkdirs(filepath.Join(root, "_bmad-output"))
	mkdirs(filepath.Join(root, "docs"))
	for link, to := range map[string]string{
		"shortcut":                data,
		"_bmad-output/data-link":  data,
		"docs/wc-link":            folders.ProjectFolder(c2),
		"_bmad-output/wc-link-dm": folders.ProjectFolder(dm),
	} {
		if err := os.Symlink(to, filepath.Join(root, link)); err != nil {
			t.Skipf("symlink: %v", err)
		}
	}
	secrets := map[string]string{dmPlan: "", dmShared: "", otherRoadmp: "", "C2-BUDGET-5521": ""}
	var targets []trickTarget
	for _, f := range []struct{ project, kind, name, session string }{
		{c2, "documents", "roadmap.md", carol.ID}, {c2, "inputs", "budget.csv", carol.ID},
		{dm, "documents", "plan.md", alice.ID}, {dm, "inputs", "salary.csv", alice.ID},
	} {
		targets = append(targets, trickTarget{project: f.project, doc: wcRel(f.project) + "/" + f.kind + "/" + f.name,
			name: f.name, data: data, root: root, session: f.session, knowFrom: "docs"})
	}
	// The files the tricks aim at are there, with their secrets.
	before := map[string]string{}
	for _, v := range targets {
		b, err := os.ReadFile(filepath.Join(data, filepath.FromSlash(v.doc)))
		if err != nil || secrets[string(b)] != "" {
			t.Fatalf("target %s: %q, %v", v.doc, b, err)
		}
		before[v.doc] = string(b)
	}
	distinct := map[string]bool{}
	for _, v := range targets {
		for _, tr := range pathTricks {
			distinct[tr.name+"\x00"+tr.path(v)] = true
		}
	}
	if len(pathTricks) < 35 || len(distinct) < 35*len(targets) {
		t.Fatalf("%d tricks, %d distinct paths; want at least 35 per target", len(pathTricks), len(distinct))
	}

	bob := h.startAs("T1/C1/1.1", "pm", "U-bob")
	// leaks fails the test when a tool result holds a secret of B, or an
	// error that is long, names the store or names a host path the model
	// did not write itself (an error may repeat the path asked for).
	leaks := func(what, asked string, r map[string]any) {
		t.Helper()
		for _, s := range flat([]map[string]any{r}) {
			for secret := range secrets {
				if strings.Contains(s, secret) {
					t.Errorf("%s reaches %q: %.300s", what, secret, s)
				}
			}
		}
		e, _ := r["error"].(string)
		for _, host := range []string{root, data, os.TempDir() + "/"} {
			if strings.Contains(e, host) && !strings.Contains(asked, host) {
				t.Errorf("%s: the error names the host path %s: %s", what, host, e)
			}
		}
		if len(e) > len(asked)+600 || strings.Contains(e, bolt.DBName) {
			t.Errorf("%s: the error is long or names the store (%d bytes): %.500s", what, len(e), e)
		}
	}
	for _, v := range targets {
		var reads, saves []fakemodel.ToolCall
		for _, tr := range pathTricks {
			reads = append(reads, call("read_file", map[string]string{"path": tr.path(v)}))
			saves = append(saves, call("save_output", map[string]string{"path": tr.path(v), "content": "A-WAS-HERE"}))
		}
		h.fm.Enqueue(fakemodel.Reply{ToolCalls: reads}, fakemodel.Reply{Text: "read"})
		h.turn(bob, "read "+v.doc)
		res := h.lastResults()
		res = res[len(res)-len(reads):]
		for i, r := range res {
			what := fmt.Sprintf("read_file %s (%s)", pathTricks[i].name, v.doc)
			if e, _ := r["error"].(string); e == "" {
				t.Errorf("%s succeeded: %.200v", what, r)
			}
			leaks(what, pathTricks[i].path(v), r)
		}
		h.fm.Enqueue(fakemodel.Reply{ToolCalls: saves}, fakemodel.Reply{Text: "saved"})
		h.turn(bob, "overwrite "+v.doc)
		res = h.lastResults()
		res = res[len(res)-len(saves):]
		for i, r := range res {
			what := fmt.Sprintf("save_output %s (%s)", pathTricks[i].name, v.doc)
			leaks(what, pathTricks[i].path(v), r)
			if e, _ := r["error"].(string); e != "" {
				continue
			}
			// Not refused: then it is a document of A, under A's /outputs.
			p, _ := r["path"].(string)
			doc, ok := strings.CutPrefix(p, "/outputs/")
			if !ok {
				t.Errorf("%s saved at %q", what, p)
				continue
			}
			if got, err := h.st.DocumentData(ctx, storage.ChannelProject("T1", "C1"), doc, 0); err != nil || string(got) != "A-WAS-HERE" {
				t.Errorf("%s saved %q, which is not A's document: %q, %v", what, p, got, err)
			}
		}
	}
	// B's files are as they were, on disk and in the store.
	for _, v := range targets {
		if b, _ := os.ReadFile(filepath.Join(data, filepath.FromSlash(v.doc))); string(b) != before[v.doc] {
			t.Errorf("%s changed to %q", v.doc, b)
		}
	}
	for _, p := range []string{dm, c2} {
		docs, err := h.st.Documents(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if d.Version != 1 || d.Thread == "T1/C1/1.1" {
				t.Errorf("project %s: %+v was written by A", p, d)
			}
		}
	}
}
