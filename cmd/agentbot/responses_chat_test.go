package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/pgtest"
)

// responsesVars is a chat on the Responses API with an OpenAI reasoning
// model (the fake's base URL is not OpenAI's, so auto would try Chat
// Completions first: the API is set).
func responsesVars(t *testing.T, fm *fakemodel.Server) map[string]string {
	vars := chatVars(t, fm)
	vars["AGENTBOT_MODEL"] = "gpt-5.6-terra"
	vars["AGENTBOT_API"] = "responses"
	return vars
}

// twoReads is a reply with two parallel tool calls.
func twoReads() fakemodel.Reply {
	return fakemodel.Reply{Text: "Checking two things.", ToolCalls: []fakemodel.ToolCall{
		{Name: "list_files", Arguments: `{"path":"/outputs"}`},
		{Name: "list_files", Arguments: `{"path":"/project"}`},
	}}
}

// checkReasoningRoundTrip asserts that the last request sent back every
// reasoning item the session's answers carry, byte for byte as issued, and
// that the stored transcript keeps them.
func checkReasoningRoundTrip(t *testing.T, fm *fakemodel.Server, stored []transcript.Message, wantItems int) {
	t.Helper()
	issued := fm.IssuedReasoning()
	reqs := fm.Requests()
	sent := fakemodel.ReasoningSent(reqs[len(reqs)-1])
	if len(sent) != wantItems {
		t.Fatalf("last request sent %d reasoning items, want %d", len(sent), wantItems)
	}
	for _, r := range sent {
		if r.EncryptedContent == "" || r.EncryptedContent != issued[r.ID] {
			t.Errorf("reasoning item %s was not sent back byte for byte", r.ID)
		}
	}
	kept := 0
	for _, m := range stored {
		for _, r := range m.ReasoningItems {
			kept++
			if issued[r.ID] != r.EncryptedContent {
				t.Errorf("stored reasoning item %s differs from the issued one", r.ID)
			}
		}
	}
	if kept < wantItems {
		t.Errorf("the stored transcript keeps %d reasoning items, want at least %d", kept, wantItems)
	}
}

// A Responses session end to end through chat: a menu pick that starts a
// workflow, a streamed answer, a second turn with two parallel tool calls,
// then a restart (a new process on the same store) and a third turn; the
// encrypted reasoning items round-trip byte for byte and never reach the
// screen.
func TestChatResponsesEndToEnd(t *testing.T) {
	ctx := context.Background()
	fm := fakemodel.NewTB(t)
	fm.Enqueue(
		fakemodel.Reply{Text: "Who is the reorder button for?", Chunks: 4},
		twoReads(),
		fakemodel.Reply{Text: "Both folders are empty; tell me about the shoppers."},
	)
	vars := responsesVars(t, fm)
	r := runCmd(t, vars, "*brief\nA checkout reorder button\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 0)
	id := sessionID(t, r.stdout)
	contains(t, "stdout", r.stdout, "Who is the reorder button for?")
	contains(t, "stdout", r.stdout, "Both folders are empty")
	if reqs := fm.Requests(); len(reqs) != 3 || reqs[2].Messages[len(reqs[2].Messages)-1].Role != "tool" {
		t.Fatalf("%d requests; the third must carry the two tool results", len(reqs))
	}
	if got := len(fakemodel.ReasoningSent(fm.Requests()[2])); got != 2 {
		t.Errorf("the tool round sent %d reasoning items back, want 2", got)
	}

	// Restart: a new process resumes the stored session.
	fm.Enqueue(fakemodel.Reply{Text: "Returning shoppers it is."})
	r2 := runCmd(t, vars, "Returning shoppers\n", "chat", "--session", id)
	r2.wantCode(t, 0)
	contains(t, "stdout", r2.stdout, "Returning shoppers it is.")

	st, err := bolt.Open(vars["AGENTBOT_DATA"])
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.SessionByID(ctx, id)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	checkReasoningRoundTrip(t, fm, stored.Messages, 3)
	for _, out := range []string{r.stdout, r.stderr, r2.stdout, r2.stderr} {
		lacks(t, "output", out, "gAAAAA")
	}
	for _, q := range fm.Requests() {
		if !fakemodel.IsResponses(q) || rawField(t, q)["store"] != false {
			t.Errorf("request %d: path %s, store %v", q.N, q.Path, rawField(t, q)["store"])
		}
	}
}

// In auto, a model OpenAI refuses tools for on Chat Completions is
// switched to the Responses API on the first call and stays there; a
// session begun on Chat Completions with another model (a transcript
// without reasoning) continues on it.
func TestChatAutoSwitchAndOldTranscript(t *testing.T) {
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "Who is the reorder button for?"})
	vars := chatVars(t, fm)
	r := runCmd(t, vars, "*brief\n", "chat", "--agent", "product-lead", "--session", "old")
	r.wantCode(t, 0)

	vars["AGENTBOT_MODEL"] = "gpt-5.6-terra"
	vars["AGENTBOT_REASONING_EFFORT"] = "medium"
	fm.Enqueue(fakemodel.Reply{Text: "Noted."}, fakemodel.Reply{Text: "And noted again."})
	r = runCmd(t, vars, "Returning shoppers\nMostly mobile\n", "chat", "--session", "old")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "Noted.")
	contains(t, "stdout", r.stdout, "And noted again.")
	if n := strings.Count(r.stderr, "model API switched"); n != 1 {
		t.Errorf("the switch was logged %d times, want once:\n%s", n, r.stderr)
	}
	reqs := fm.Requests()
	var kinds []string
	for _, q := range reqs {
		kinds = append(kinds, map[bool]string{true: "responses", false: "chat"}[fakemodel.IsResponses(q)])
	}
	// chat (old model), chat refused (400), responses, responses.
	if strings.Join(kinds, " ") != "chat chat responses responses" {
		t.Fatalf("requests: %v", kinds)
	}
	if len(fakemodel.ReasoningSent(reqs[2])) != 0 || len(fakemodel.ReasoningSent(reqs[3])) != 1 {
		t.Errorf("reasoning sent: %v then %v", fakemodel.ReasoningSent(reqs[2]), fakemodel.ReasoningSent(reqs[3]))
	}
}

// rawField decodes a recorded request body.
func rawField(t *testing.T, r fakemodel.Request) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Raw, &m); err != nil {
		t.Fatalf("request %d: %v", r.N, err)
	}
	return m
}

// Reasoning state survives `migrate` into PostgreSQL and a takeover by
// another replica (an empty data folder on the same database), and stays
// out of `sessions export`, which is for people.
func TestChatResponsesMigrateExportReplica(t *testing.T) {
	url := pgtest.URL(t)
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "Who is the reorder button for?"}, twoReads(), fakemodel.Reply{Text: "Both empty."})
	vars := responsesVars(t, fm)
	r := runCmd(t, vars, "*brief\nA checkout reorder button\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 0)
	id := sessionID(t, r.stdout)

	exp := runCmd(t, vars, "", "sessions", "export", id)
	exp.wantCode(t, 0)
	contains(t, "export", exp.stdout, "Both empty.")
	lacks(t, "export", exp.stdout, "gAAAAA")
	lacks(t, "export", exp.stdout, "reasoning_items")

	vars["AGENTBOT_DATABASE_URL"] = url
	runCmd(t, vars, "", "migrate").wantCode(t, 0)
	vars["AGENTBOT_DATA"] = filepath.Join(t.TempDir(), "replica")
	fm.Enqueue(fakemodel.Reply{Text: "Continuing on another replica."})
	r = runCmd(t, vars, "Returning shoppers\n", "chat", "--session", id)
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "Continuing on another replica.")
	sent := fakemodel.ReasoningSent(fm.Requests()[3])
	issued := fm.IssuedReasoning()
	if len(sent) != 3 {
		t.Fatalf("the replica sent %d reasoning items back, want 3", len(sent))
	}
	for _, s := range sent {
		if s.EncryptedContent != issued[s.ID] {
			t.Errorf("reasoning item %s changed on its way through PostgreSQL", s.ID)
		}
	}
}

// An error event inside the stream after the first token ends the turn
// with the provider's message, is not retried (the text was shown), and
// the cut answer is not stored: the next line continues cleanly, and the
// reasoning of the failed attempt is not sent back.
func TestChatResponsesStreamErrorAfterText(t *testing.T) {
	ctx := context.Background()
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "Who is the reorder button for?"},
		fakemodel.Reply{Text: "This answer will be cut off here", Chunks: 4},
		fakemodel.Reply{Text: "Fresh answer."})
	fm.EnqueueStreamFault(fakemodel.StreamFault{}, fakemodel.StreamFault{Event: "error", Code: "server_error", Message: "The model had an error mid-answer", AfterDeltas: 2})
	vars := responsesVars(t, fm)
	r := runCmd(t, vars, "*brief\nA checkout reorder button\nTry again\n", "chat", "--agent", "product-lead", "--session", "cut")
	contains(t, "output", r.stdout+r.stderr, "The model had an error mid-answer")
	contains(t, "stdout", r.stdout, "Fresh answer.")
	if n := fm.Calls(); n != 3 {
		t.Errorf("%d model calls, want 3 (the cut one not retried)", n)
	}
	st, err := bolt.Open(vars["AGENTBOT_DATA"])
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := storage.Session(ctx, st, "chat/cut")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range s.Messages {
		if strings.Contains(m.Content, "cut off") {
			t.Errorf("the cut answer was stored: %+v", m)
		}
	}
	if got := len(fakemodel.ReasoningSent(fm.Requests()[2])); got != 1 {
		t.Errorf("the retry after the cut sent %d reasoning items, want only the first answer's", got)
	}
}
