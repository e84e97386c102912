package engine_test

import (
	"context"
	"fmt"
	"io/fs"
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

// Secrets of other projects the attacks look for: Alice's DM document and
// the file she shared there, and a document of another channel.
const (
	dmPlan      = "ALICE-DM-PLAN-7731"
	dmShared    = "ALICE-DM-SALARY-4410"
	otherRoadmp = "C2-ROADMAP-9902"
)

// dataInRoot is a 6.12 BMAD root whose data folder (dataRel, the default
// ./data of a team running agentbot from its repository, or one inside
// _bmad-output) lies inside it, with project_knowledge set to knowledge;
// projects on, the data folder hidden as cmd/agentbot hides it.
func dataInRoot(t *testing.T, dataRel, knowledge string) (*harness, string, string) {
	t.Helper()
	root := fixtures.Copy(t, fixtures.V612)
	for _, cfg := range []string{"_bmad/config.toml", "_bmad/bmm/config.yaml"} {
		b, err := os.ReadFile(filepath.Join(root, cfg))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `"{project-root}/docs"`, `"`+knowledge+`"`, 1)
		if s == string(b) && !strings.Contains(s, `"`+knowledge+`"`) {
			t.Fatalf("project_knowledge not found in %s", cfg)
		}
		write(t, root, cfg, s)
	}
	write(t, root, "_bmad-output/planning-artifacts/root-brief.md", "ROOT-BRIEF of the repository")
	data := filepath.Join(root, filepath.FromSlash(dataRel))
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := &harness{t: t, fm: fakemodel.NewTB(t), st: st, dir: t.TempDir()}
	h.cat = catalog.Load(catalog.Options{Bundles: []string{fixtures.Bundles(t)}, BMADRoots: []string{root}})
	h.cfg = engine.Config{
		Catalog: func() *catalog.Catalog { return h.cat },
		Model:   model.New(model.Config{APIKey: "k", BaseURL: h.fm.URL(), Model: "m"}),
		Store:   st, Outputs: st, Hidden: []string{data},
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
		InputRoot:  func(id string) string { d, _ := st.InputDir(id); return d },
		Projects: &engine.Projects{Store: st, Of: projectOfKey,
			Root: storage.Folders{Dir: data}.ProjectFolder},
	}
	h.eng = engine.New(h.cfg)
	return h, root, data
}

// seedOtherProjects gives Alice's DM project a document and a shared file,
// and channel C2's project a document; it returns their sessions.
func seedOtherProjects(h *harness) (alice, carol *engine.Session) {
	h.t.Helper()
	alice = h.startAs("T1/D1/1.1", "pm", "U-alice")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "plan.md", "content": dmPlan})}},
		fakemodel.Reply{Text: "saved"})
	h.turn(alice, "save my plan")
	if err := h.eng.KeepInput(context.Background(), alice, "U-alice", "salary.csv", []byte(dmShared)); err != nil {
		h.t.Fatal(err)
	}
	carol = h.startAs("T1/C2/1.1", "pm", "U-carol")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "roadmap.md", "content": otherRoadmp})}},
		fakemodel.Reply{Text: "saved"})
	h.turn(carol, "save the roadmap")
	return alice, carol
}

// The data folder inside the BMAD root never becomes part of a project's
// base layers: with project_knowledge "{project-root}/." (the whole root)
// or the data folder inside _bmad-output, a thread of channel C1 lists
// /outputs and reads, under the names the base layer would give them, the
// store, Alice's DM document and shared file and channel C2's document:
// none is there, none is in the project's working copy, and the base
// layer's own files still are.
func TestDataFolderNeverInABaseLayer(t *testing.T) {
	for _, c := range []struct{ name, data, knowledge, under string }{
		{"./data and project_knowledge {project-root}/.", "data", "{project-root}/.", "data"},
		{"data folder inside _bmad-output", "_bmad-output/agentbot-data", "{project-root}/docs", "agentbot-data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, root, data := dataInRoot(t, c.data, c.knowledge)
			seedOtherProjects(h)
			bob := h.startAs("T1/C1/1.1", "pm", "U-bob")
			// Where the other projects' files would show if the base layer
			// copied the data folder.
			var paths []string
			for _, p := range []string{storage.ChannelProject("T1", "D1"), storage.ChannelProject("T1", "C2")} {
				rel, err := filepath.Rel(data, storage.Folders{Dir: data}.ProjectFolder(p))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{"documents/plan.md", "inputs/salary.csv", "documents/roadmap.md"} {
					paths = append(paths, "/outputs/"+c.under+"/"+filepath.ToSlash(rel)+"/"+f)
				}
			}
			paths = append(paths, "/outputs/"+c.under+"/"+bolt.DBName, "/project/"+c.data+"/"+bolt.DBName)
			calls := []fakemodel.ToolCall{
				call("list_files", map[string]string{"glob": "/outputs/**"}),
				call("list_files", map[string]string{"glob": "/outputs/" + c.under + "/**"}),
				call("list_files", map[string]string{"glob": "**/" + bolt.DBName}),
				call("read_file", map[string]string{"path": "/outputs/planning-artifacts/root-brief.md"}),
			}
			for _, p := range paths {
				calls = append(calls, call("read_file", map[string]string{"path": p}))
			}
			h.fm.Enqueue(fakemodel.Reply{ToolCalls: calls}, fakemodel.Reply{Text: "done"})
			h.turn(bob, "list every file you can see")
			res := h.lastResults()
			res = res[len(res)-len(calls):]
			for i, r := range res[:3] {
				files := fmt.Sprint(r["files"])
				for _, bad := range []string{bolt.DBName, "/plan.md", "salary.csv", "roadmap.md", "/projects/", "/sessions/"} {
					if strings.Contains(files, bad) {
						t.Fatalf("list_files %d shows %q: %.600s", i, bad, files)
					}
				}
			}
			contains(t, fmt.Sprint(res[3]["content"]), "ROOT-BRIEF", "the base layer's own file")
			for i, r := range res[4:] {
				if e, _ := r["error"].(string); e == "" {
					t.Errorf("read_file %s = %.200v", paths[i], r)
				}
			}
			all := strings.Join(flat(res), " ")
			for _, secret := range []string{dmPlan, dmShared, otherRoadmp} {
				if strings.Contains(all, secret) {
					t.Fatalf("bob's tools reach %q", secret)
				}
			}
			// Nothing of the data folder was copied into C1's working copy.
			own := storage.Folders{Dir: data}.ProjectFolder(storage.ChannelProject("T1", "C1"))
			_ = filepath.WalkDir(own, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				b, _ := os.ReadFile(p)
				if d.Name() == bolt.DBName || strings.Contains(string(b), dmPlan) || strings.Contains(string(b), dmShared) || strings.Contains(string(b), otherRoadmp) {
					t.Errorf("C1's working copy holds %s", p)
				}
				return nil
			})
			noHostPaths(t, h, root)
		})
	}
}
