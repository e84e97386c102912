package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/model"
	"agentbot/storage/bolt"
)

// hostBundle writes a standalone bundle whose config.yaml holds host paths:
// inside the bundle, through a link to it, in the data folder inside it,
// elsewhere on the host, on another machine, and one that is no path.
func hostBundle(t *testing.T, dir string) (bundle, data string) {
	t.Helper()
	bundle = filepath.Join(dir, "team")
	data = filepath.Join(bundle, "data")
	if err := os.Symlink(bundle, filepath.Join(dir, "team-link")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	elsewhere := filepath.Join(dir, "elsewhere")
	write(t, elsewhere, "notes.md", "not the agent's")
	write(t, bundle, "bundle.yaml", "type: standalone\nagent:\n  id: coach\n  file: coach.md\n")
	write(t, bundle, "coach.md", "# Coach\n\n```xml\n<agent id=\"coach\" name=\"Coach\" title=\"Coach\" icon=\"🤖\">\n"+
		"  <persona><role>Coach</role></persona>\n"+
		"  <critical-actions><i>Load into memory {bundle-root}/config.yaml</i></critical-actions>\n"+
		"  <cmds>\n    <c cmd=\"*help\">Show numbered cmd list</c>\n  </cmds>\n</agent>\n```\n")
	write(t, bundle, "config.yaml", strings.Join([]string{
		"user_name: Ana",
		"docs_dir: " + filepath.Join(bundle, "docs"),
		"guide_file: " + filepath.Join(dir, "team-link/docs/guide.md"),
		"sessions_dir: " + filepath.Join(data, "outputs"),
		"other_dir: " + elsewhere,
		"laptop_dir: /Users/ana/Projects/team/docs",
		"api_path: /agentbot-no-such-root-7f3a/v1",
		"output_folder: " + filepath.Join(bundle, "out"),
	}, "\n")+"\n")
	write(t, bundle, "docs/guide.md", "the team guide")
	return bundle, data
}

// A config value that is a host path reaches the model as its /project
// path, or as a note when the model cannot read it there; no request holds
// a host path, and the model can read through the mapped variable.
func TestConfigHostPathsReachModelAsVirtual(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bundle, data := hostBundle(t, dir)
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fm := fakemodel.NewTB(t)
	cat := catalog.Load(catalog.Options{Bundles: []string{bundle}})
	eng := engine.New(engine.Config{
		Catalog:    func() *catalog.Catalog { return cat },
		Model:      model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m"}),
		Store:      st,
		Hidden:     []string{data},
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
		InputRoot:  func(id string) string { d, _ := st.InputDir(id); return d },
	})
	a, ok := cat.Find("coach")
	if !ok {
		t.Fatalf("agent missing: %+v", cat.Problems)
	}
	s, _ := live(st.NewSession(ctx, "s1"))
	if _, err := eng.Activate(context.Background(), s, a); err != nil {
		t.Fatal(err)
	}
	sp := s.Messages[0].Content
	for _, want := range []string{
		"- {docs_dir} = /project/docs\n",
		"- {guide_file} = /project/docs/guide.md\n",
		"- {sessions_dir} = (a folder outside",
		"- {other_dir} = (a folder outside",
		"- {laptop_dir} = (a folder outside",
		"- {api_path} = /agentbot-no-such-root-7f3a/v1\n",
		"- {output_folder} = /outputs\n",
	} {
		contains(t, sp, want, "system prompt variables")
	}
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
		call("read_file", map[string]string{"path": "{docs_dir}/guide.md"}),
		call("read_file", map[string]string{"path": "{guide_file}"}),
		call("read_file", map[string]string{"path": filepath.Join(dir, "elsewhere/notes.md")}),
		call("read_file", map[string]string{"path": filepath.Join(data, "outputs")}),
	}}, fakemodel.Reply{Text: "done"})
	if _, err := eng.Turn(t.Context(), s, "read the guide", nil); err != nil {
		t.Fatal(err)
	}
	reqs := fm.Requests()
	res := toolResults(t, reqs[len(reqs)-1])
	if len(res) != 4 {
		t.Fatalf("results: %v", res)
	}
	for i := range 2 {
		if c, _ := res[i]["content"].(string); !strings.Contains(c, "the team guide") {
			t.Errorf("read %d through a mapped variable: %v", i, res[i])
		}
	}
	for i := 2; i < 4; i++ {
		if e, _ := res[i]["error"].(string); e == "" {
			t.Errorf("read %d outside the agent's files: %v", i, res[i])
		}
	}
	contains(t, string(reqs[0].Raw), "/project/docs", "first request")
	// Only the model's own tool arguments may name host paths.
	for _, r := range reqs {
		for i, m := range r.Messages {
			for _, host := range []string{dir, "/Users/ana", os.TempDir() + "/"} {
				if strings.Contains(m.Content, host) {
					t.Fatalf("request %d, message %d (%s) names the host path %s: %.300s", r.N, i, m.Role, host, m.Content)
				}
			}
		}
	}
}

// A skill-format agent's central config gets the same treatment.
func TestSkillConfigHostPathsReachModelAsVirtual(t *testing.T) {
	var root string
	h, _ := skillHarness(t, func(r string) {
		root = r
		p := filepath.Join(r, "_bmad/config.toml")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cfg := strings.Replace(string(b), `project_knowledge = "{project-root}/docs"`,
			`project_knowledge = "`+filepath.Join(r, "docs")+`"`+"\n"+`team_share = "/home/ana/share"`, 1)
		if cfg == string(b) {
			t.Fatal("project_knowledge not found in config.toml")
		}
		write(t, r, "_bmad/config.toml", cfg)
	})
	s, _ := h.start("k1", "pm")
	sp := systemPrompt(s)
	contains(t, sp, "- {project_knowledge} = /project/docs\n", "skill prompt")
	contains(t, sp, "- {team_share} = (a folder outside", "skill prompt")
	h.fm.Enqueue(fakemodel.Reply{Text: "hello"})
	h.turn(s, "hi")
	noHostPaths(t, h, root, "/home/ana")
}
