package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/storage/bolt"
)

// Run inside the project, as a team would: the data folder is ./data in
// the bundle. Bob's session cannot read Alice's document or the project's
// .env, and a config value that is a host path reaches the model as its
// /project path, never as the host path.
func TestSessionIsolationEndToEnd(t *testing.T) {
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
	alice, _ := live(st.NewSession("alice"))
	if _, err := eng.Activate(alice, a); err != nil {
		t.Fatal(err)
	}
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "secret-plan.md", "content": "alice's plan"})}}, fakemodel.Reply{Text: "saved"})
	if _, err := eng.Turn(t.Context(), alice, "save it", nil); err != nil {
		t.Fatal(err)
	}
	bob, _ := live(st.NewSession("bob"))
	if _, err := eng.Activate(bob, a); err != nil {
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
