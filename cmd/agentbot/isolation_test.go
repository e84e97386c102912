package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
)

// Run inside the project with the data folder in it, as the issue tells:
// a second session cannot read the first one's document, the project's
// .env or a name AGENTBOT_DENY adds, however it names them.
func TestChatSessionsIsolatedInsideProject(t *testing.T) {
	team := filepath.Join(t.TempDir(), "team")
	fixtures.CopyDir(t, filepath.Join(bundlesDir(t), "product-team"), team)
	for name, body := range map[string]string{".env": "OPENAI_API_KEY=sk-live-secret\n", "notes.private.md": "private notes\n"} {
		if err := os.WriteFile(filepath.Join(team, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["AGENTBOT_BUNDLES"] = team
	vars["AGENTBOT_DATA"] = filepath.Join(team, "data")
	vars["AGENTBOT_DENY"] = "*.private.md"

	save, _ := json.Marshal(map[string]string{"path": "secret-plan.md", "content": "alice's plan"})
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: string(save)}}}, fakemodel.Reply{Text: "saved"})
	r := runCmd(t, vars, "save my plan\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 0)
	alice := sessionID(t, r.stdout)

	doc := "data/outputs/" + alice + "/secret-plan.md"
	var calls []fakemodel.ToolCall
	for _, p := range []string{"/project/" + doc, doc, filepath.Join(team, doc), "/project/.env", ".env", "/project/notes.private.md"} {
		args, _ := json.Marshal(map[string]string{"path": p})
		calls = append(calls, fakemodel.ToolCall{Name: "read_file", Arguments: string(args)})
	}
	fm.Enqueue(fakemodel.Reply{ToolCalls: calls}, fakemodel.Reply{Text: "nothing there"})
	r = runCmd(t, vars, "read alice's plan\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 0)

	reqs := fm.Requests()
	var results []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == openai.ChatMessageRoleTool {
			results = append(results, m.Content)
		}
	}
	if len(results) != len(calls) {
		t.Fatalf("%d tool results for %d calls: %q", len(results), len(calls), results)
	}
	for i, res := range results {
		lacks(t, "result", res, "alice's plan")
		lacks(t, "result", res, "sk-live-secret")
		lacks(t, "result", res, "private notes")
		lacks(t, "result", res, team)
		if i >= 3 {
			contains(t, "result", res, "denied by policy")
		}
	}
}
