package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/pgtest"
)

// providerModes are the fake's provider modes as users set them up.
var providerModes = fakemodel.Setups

// For every provider mode, through `chat`: a menu pick that starts a
// workflow, a turn with two parallel tool calls and a streamed answer, a
// second turn, then a restart and a third turn. Each request passes the
// provider's own validation (ids, message order, reasoning state sent
// back), and the reasoning state of the first call is still sent after the
// restart.
func TestChatEveryProvider(t *testing.T) {
	for _, pm := range providerModes {
		t.Run(pm.Name, func(t *testing.T) {
			fm := fakemodel.NewTB(t)
			fm.SetProvider(pm.Provider)
			fm.Enqueue(fakemodel.ScenarioReplies()...)
			vars := chatVars(t, fm)
			vars["AGENTBOT_MODEL"] = pm.Model
			if pm.Azure {
				vars["OPENAI_API_TYPE"], vars["OPENAI_BASE_URL"] = "azure", fm.RootURL()
			}
			r := runCmd(t, vars, "*brief\nReturning shoppers\n", "chat", "--agent", "product-lead", "--session", "p")
			r.wantCode(t, 0)
			contains(t, "stdout", r.stdout, "Who is the reorder button for?")
			contains(t, "stdout", r.stdout, "Returning shoppers, noted.")

			r = runCmd(t, vars, "And now?\n", "chat", "--session", "p")
			r.wantCode(t, 0)
			contains(t, "stdout after restart", r.stdout, "Third turn answered.")

			reqs := fm.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d model calls, want 4", len(reqs))
			}
			last := string(reqs[3].Raw)
			if pm.Kept != "" && !strings.Contains(last, pm.Kept) {
				t.Errorf("the third turn's request lacks %s:\n%s", pm.Kept, last)
			}
			for _, q := range reqs {
				checkWireOrder(t, q)
			}
		})
	}
}

// checkWireOrder checks the rules every provider's requests follow: strict
// tool-call ids, no user message after tool results, no two assistant
// messages in a row, no reasoning text in what users see.
func checkWireOrder(t *testing.T, q fakemodel.Request) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(q.Raw, &body); err != nil {
		t.Fatal(err)
	}
	prev := ""
	for i, m := range body.Messages {
		ids := []string{m.ToolCallID}
		for _, tc := range m.ToolCalls {
			ids = append(ids, tc.ID)
		}
		for _, id := range ids {
			if id != "" && (len(id) != 9 || strings.ContainsAny(id, "_-")) {
				t.Errorf("request %d message %d: id %q is not 9 alphanumerics", q.N, i, id)
			}
		}
		if (prev == "tool" && m.Role == "user") || (prev == "assistant" && m.Role == "assistant") {
			t.Errorf("request %d message %d: %s after %s", q.N, i, m.Role, prev)
		}
		prev = m.Role
	}
}

// A session written before reasoning state existed (storage/bolt/testdata/v1)
// resumes against the strict providers: its old tool-call ids are sent in
// Mistral's form, its calls get DeepSeek's placeholder, and the thinking
// providers accept its history.
func TestV1SessionResumesWithEveryProvider(t *testing.T) {
	for _, pm := range providerModes {
		t.Run(pm.Name, func(t *testing.T) {
			fm := fakemodel.NewTB(t)
			fm.SetProvider(pm.Provider)
			vars := chatVars(t, fm)
			if strings.HasPrefix(vars["AGENTBOT_BUNDLES"], "/work/main/") {
				t.Skip("the bundles are where the v1 data recorded them")
			}
			v1Data(t, vars)
			vars["AGENTBOT_MODEL"] = pm.Model
			if pm.Azure {
				vars["OPENAI_API_TYPE"], vars["OPENAI_BASE_URL"] = "azure", fm.RootURL()
			}
			fm.Enqueue(fakemodel.Reply{Text: "Resumed on " + pm.Name + "."})
			r := runCmd(t, vars, "Make it for returning shoppers\n", "chat", "--session", "lgjnajbfftn7e")
			r.wantCode(t, 0)
			contains(t, "stdout", r.stdout, "Resumed on "+pm.Name+".")
			checkWireOrder(t, fm.Requests()[0])
		})
	}
}

// Reasoning state survives a migration to PostgreSQL: the chat resumed from
// the database sends DeepSeek's reasoning_content back; the Markdown export
// for people leaves it out.
func TestReasoningSurvivesMigrateAndStaysOutOfExport(t *testing.T) {
	url := pgtest.URL(t)
	fm := fakemodel.NewTB(t)
	fm.SetProvider(fakemodel.DeepSeek)
	fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{Name: "read_file", Arguments: `{"path":"/outputs/a.md"}`}}},
		fakemodel.Reply{Text: "First answer."},
		fakemodel.Reply{Text: "From the database."},
	)
	vars := chatVars(t, fm)
	vars["AGENTBOT_MODEL"] = "deepseek-v4-pro"
	r := runCmd(t, vars, "hello\n", "chat", "--agent", "product-lead", "--session", "mig")
	r.wantCode(t, 0)
	id := sessionID(t, r.stdout)

	r = runCmd(t, vars, "", "sessions", "export", id)
	r.wantCode(t, 0)
	lacks(t, "export", r.stdout, fakemodel.ReasoningMarker)

	vars["AGENTBOT_DATABASE_URL"] = url
	r = runCmd(t, vars, "", "migrate")
	r.wantCode(t, 0)
	vars["AGENTBOT_DATA"] = t.TempDir()
	r = runCmd(t, vars, "And now?\n", "chat", "--session", "mig")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "From the database.")
	if last := string(fm.Requests()[2].Raw); !strings.Contains(last, `"reasoning_content":"The user asked something; request 1 needs a careful answer."`) {
		t.Errorf("the request after the migration lacks the reasoning:\n%.2000s", last)
	}
}

// Errors inside a stream, through `chat`: one before the first token is
// retried and the answer arrives; one after it ends the turn with the
// provider's own message (OpenRouter's metadata.raw included), and the
// partial answer is not stored as the agent's answer.
func TestChatStreamErrors(t *testing.T) {
	ctx := context.Background()
	fm := fakemodel.NewTB(t)
	fm.SetProvider(fakemodel.OpenRouter)
	upstream := &fakemodel.StreamError{Code: 502, Message: "Provider returned error", Raw: "upstream connect error", Provider: "Novita"}
	fm.Enqueue(
		fakemodel.Reply{Text: "lost", StreamError: upstream},
		fakemodel.Reply{Text: "Hello after a retry."},
		fakemodel.Reply{Text: "A half answ", Chunks: 2, StreamError: &fakemodel.StreamError{After: 4 + 1, Code: 502, Message: "Provider returned error", Raw: "upstream reset", Provider: "Novita"}},
	)
	vars := chatVars(t, fm)
	vars["AGENTBOT_MODEL"] = "deepseek/deepseek-v4"
	r := runCmd(t, vars, "hi\nwrite more\n", "chat", "--agent", "product-lead", "--session", "e")
	contains(t, "stdout", r.stdout, "Hello after a retry.")
	contains(t, "output", r.stdout+r.stderr, "Novita: upstream reset")

	st, err := bolt.Open(vars["AGENTBOT_DATA"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := storage.Session(ctx, st, "chat/e")
	if err != nil {
		t.Fatal(err)
	}
	if last := s.Messages[len(s.Messages)-1]; last.Role != "user" || last.Content != "write more" {
		t.Errorf("the transcript ends with %s %q, want the user's line (the partial answer is not stored)", last.Role, last.Content)
	}
}
