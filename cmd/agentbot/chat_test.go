package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// chatVars is the environment of a chat against the fake model: its URL, a
// key, a model name, a fresh data folder and the sample bundles.
func chatVars(t *testing.T, fm *fakemodel.Server) map[string]string {
	return map[string]string{
		"OPENAI_BASE_URL":  fm.URL(),
		"OPENAI_API_KEY":   "k",
		"AGENTBOT_MODEL":   "m",
		"AGENTBOT_DATA":    filepath.Join(t.TempDir(), "data"),
		"AGENTBOT_BUNDLES": bundlesDir(t),
	}
}

var sessionLine = regexp.MustCompile(`(?m)^Session (\S+) \(resume: agentbot chat --session (\S+)\)$`)

// sessionID reads the session id a new chat prints first.
func sessionID(t *testing.T, stdout string) string {
	t.Helper()
	m := sessionLine.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no session line in:\n%s", stdout)
	}
	return m[1]
}

// briefReplies scripts a product brief: a question, then a save_output call
// with a word of text, then the closing answer.
func briefReplies(fm *fakemodel.Server) {
	args, _ := json.Marshal(map[string]string{"path": "product-brief.md", "content": "# Product brief\n\nA reorder button at checkout.\n"})
	fm.Enqueue(
		fakemodel.Reply{Text: "Who is the reorder button for?"},
		fakemodel.Reply{Text: "Drafting the brief now.", ToolCalls: []fakemodel.ToolCall{{Name: "save_output", Arguments: string(args)}}},
		fakemodel.Reply{Text: "Your brief is saved as product-brief.md."},
	)
}

// briefChat runs the scripted brief chat and returns its vars and result.
func briefChat(t *testing.T) (*fakemodel.Server, map[string]string, result) {
	fm := fakemodel.NewTB(t)
	briefReplies(fm)
	vars := chatVars(t, fm)
	r := runCmd(t, vars, "*brief\nA checkout reorder button\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 0)
	return fm, vars, r
}

func TestChatBriefEndToEnd(t *testing.T) {
	fm, vars, r := briefChat(t)
	out := r.stdout
	id := sessionID(t, out)

	// The greeting with the numbered menu comes first, at no model cost.
	greet := out[:strings.Index(out, "> *brief")]
	contains(t, "greeting", greet, "Maren")
	for _, item := range []string{"1.", "2.", "*brief", "*prd"} {
		contains(t, "greeting menu", greet, item)
	}

	// Turn 1: the tool progress line, then the model's question.
	turn1 := out[strings.Index(out, "> *brief"):strings.Index(out, "> A checkout reorder button")]
	contains(t, "turn 1", turn1, "loading workflow product-brief…")
	contains(t, "turn 1", turn1, "Who is the reorder button for?")
	if strings.Index(turn1, "loading workflow") > strings.Index(turn1, "Who is the reorder") {
		t.Errorf("progress after the answer:\n%s", turn1)
	}

	// Turn 2: the save, then the answers.
	turn2 := out[strings.Index(out, "> A checkout reorder button"):]
	contains(t, "turn 2", turn2, "Drafting the brief now.")
	if !regexp.MustCompile(`saved \S*product-brief\S*\.md`).MatchString(turn2) {
		t.Errorf("turn 2 lacks the saved line:\n%s", turn2)
	}
	contains(t, "turn 2", turn2, "Your brief is saved as product-brief.md.")

	// The file is in the working copy of the terminal project's documents.
	_ = id
	file := filepath.Join(storage.Folders{Dir: vars["AGENTBOT_DATA"]}.ProjectFolder(storage.TerminalProject), "documents", "product-brief.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("output: %v\nstdout:\n%s", err, out)
	}
	if string(data) != "# Product brief\n\nA reorder button at checkout.\n" {
		t.Errorf("output content %q", data)
	}
	contains(t, "turn 2", turn2, file)

	// One model call answered the menu pick; the next request already
	// carries that answer and the user's second line.
	reqs := fm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3", len(reqs))
	}
	picks := 0
	for _, q := range reqs {
		if strings.HasPrefix(q.LastUserText(), "*brief") {
			picks++
		}
	}
	if picks != 1 {
		t.Errorf("%d model calls for the *brief pick, want 1", picks)
	}
	if got := reqs[0].LastUserText(); !strings.Contains(got, "picked menu item") {
		t.Errorf("first request's user text %q lacks the pick note", got)
	}
	var preloaded bool
	for _, m := range reqs[0].Messages {
		for _, tc := range m.ToolCalls {
			preloaded = preloaded || tc.Function.Name == "preload_workflow"
		}
	}
	if !preloaded {
		t.Error("first request lacks the preloaded workflow")
	}
	if got := reqs[1].LastUserText(); got != "A checkout reorder button" {
		t.Errorf("second request's user text %q", got)
	}
	if r.stderr != "" {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// msgView is what comparing transcripts looks at.
type msgView struct {
	Role, Content, ToolCallID string
	Calls                     []string
}

func views(msgs []transcript.Message) []msgView {
	out := make([]msgView, len(msgs))
	for i, m := range msgs {
		v := msgView{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			v.Calls = append(v.Calls, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
		}
		out[i] = v
	}
	return out
}

func TestChatSessionResumes(t *testing.T) {
	ctx := context.Background()
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "Who is the reorder button for?"})
	vars := chatVars(t, fm)
	r := runCmd(t, vars, "*brief\n", "chat", "--agent", "product-lead", "--session", "demo")
	r.wantCode(t, 0)
	if got := sessionLine.FindStringSubmatch(r.stdout); got == nil || got[2] != "demo" {
		t.Fatalf("session line %q", got)
	}

	st, err := bolt.Open(vars["AGENTBOT_DATA"])
	if err != nil {
		t.Fatal(err)
	}
	stored, err := storage.Session(ctx, st, "chat/demo")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(stored.Messages); n < 4 {
		t.Fatalf("stored transcript has %d messages", n)
	}

	fm.Enqueue(fakemodel.Reply{Text: "Got it: returning shoppers."})
	r = runCmd(t, vars, "Returning shoppers\n", "chat", "--session", "demo")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, `Resuming session "demo" with product-lead`)
	contains(t, "stdout", r.stdout, "Got it: returning shoppers.")

	reqs := fm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	// The resumed request extends the first one (the prefix cache holds
	// across the restart): the first request, the answer, the new line.
	sent := views(sentMessages(t, reqs[1]))
	want := views(sentMessages(t, reqs[0]))
	if len(sent) != len(want)+2 {
		t.Fatalf("resumed request has %d messages, want the first request's %d plus the answer and the new line", len(sent), len(want))
	}
	for i := range want {
		a, _ := json.Marshal(sent[i])
		b, _ := json.Marshal(want[i])
		if string(a) != string(b) {
			t.Fatalf("message %d differs from the first request:\nsent   %s\nbefore %s", i, a, b)
		}
	}
	if answer := sent[len(want)]; answer.Role != "assistant" || answer.Content != "Who is the reorder button for?" {
		t.Errorf("answer in the resumed request: %+v", answer)
	}
	if last := sent[len(sent)-1]; last.Role != "user" || last.Content != "Returning shoppers" {
		t.Errorf("last message %+v", last)
	}

	// A different --agent does not take over a named session.
	fm.Enqueue(fakemodel.Reply{Text: "Still Maren."})
	r = runCmd(t, vars, "hi\n", "chat", "--session", "demo", "--agent", "retro-coach")
	r.wantCode(t, 0)
	contains(t, "stderr", r.stderr, "belongs to agent product-lead")
}

func TestChatUnknownAgent(t *testing.T) {
	fm := fakemodel.NewTB(t)
	r := runCmd(t, chatVars(t, fm), "hello\n", "chat", "--agent", "nobody")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, `no agent "nobody"`)
	contains(t, "stderr", r.stderr, "product-lead")
	contains(t, "stderr", r.stderr, "retro-coach")
	if fm.Calls() != 0 {
		t.Errorf("%d model calls", fm.Calls())
	}
}

func TestChatNeedsAgent(t *testing.T) {
	fm := fakemodel.NewTB(t)
	r := runCmd(t, chatVars(t, fm), "hello\n", "chat")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "--agent is required")
}

func TestChatMissingCriticalConfig(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["AGENTBOT_BUNDLES"] = writeSolo(t, t.TempDir(), false) // no config.yaml
	r := runCmd(t, vars, "*note\n", "chat", "--agent", "solo")
	r.wantCode(t, 1)
	contains(t, "stderr", r.stderr, "config.yaml")
	lacks(t, "stderr", r.stderr, vars["AGENTBOT_BUNDLES"]) // no host paths, the virtual ones
	if fm.Calls() != 0 {
		t.Errorf("%d model calls", fm.Calls())
	}
	// No half-started session is left behind.
	r = runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	lacks(t, "sessions list", r.stdout, "solo")
}

func TestChatBadTemperature(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["AGENTBOT_TEMPERATURE"] = "warm"
	r := runCmd(t, vars, "hi\n", "chat", "--agent", "product-lead")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, `$AGENTBOT_TEMPERATURE="warm": want empty (the provider's default) or a number from 0 to 2`)
}

// A turn cut short (here the model failed after a first answer; a kill -9
// leaves the same transcript) makes chat exit 1; the next chat on the session resumes that
// turn first and says so, and no request holds two user messages in a row.
func TestChatResumesUnfinishedTurn(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	vars["AGENTBOT_CALL_TIMEOUT"] = "2s"
	fm.Enqueue(fakemodel.Reply{Text: "Hello, Maren here."}, fakemodel.Reply{Status: 500}, fakemodel.Reply{Status: 500}, fakemodel.Reply{Status: 500}, fakemodel.Reply{Status: 500})
	r := runCmd(t, vars, "hello\ntell me about reorder\n", "chat", "--agent", "product-lead", "--session", "cut")
	r.wantCode(t, 1)
	fm.Enqueue(fakemodel.Reply{Text: "About reorder: who asks for it?"}, fakemodel.Reply{Text: "Thanks, noted."})
	r = runCmd(t, vars, "B2B buyers\n", "chat", "--session", "cut")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "Resuming the unfinished turn…")
	contains(t, "stdout", r.stdout, "About reorder: who asks for it?")
	contains(t, "stdout", r.stdout, "Thanks, noted.")
	lacks(t, "stdout", r.stdout, "Here is what I can do") // no second greeting
	for _, req := range fm.Requests() {
		for i := 1; i < len(req.Messages); i++ {
			if req.Messages[i].Role == "user" && req.Messages[i-1].Role == "user" && i > 1 {
				t.Fatalf("request %d has two user messages in a row at %d", req.N, i)
			}
		}
	}
}

// chat exits 1 when its last turn failed, also when that turn is the
// resumed one, and 0 when a later turn succeeded; a message written after a
// failed turn does not follow it directly (no two user messages in a row).
func TestChatExitCodes(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		if strings.Contains(req.LastUserText(), "fail") {
			return fakemodel.Reply{Status: 400} // not retried
		}
		return fakemodel.Reply{Text: "ok: " + req.LastUserText()}
	})
	for _, c := range []struct {
		session, input string
		code           int
	}{
		{"a", "hello\n", 0},
		{"b", "hello\nfail now\n", 1},
		{"b", "", 1}, // the resumed turn fails again, nothing follows it
		{"b", "hello again\n", 0},
		{"c", "fail first\nthen hello\n", 0},
	} {
		args := []string{"chat", "--session", c.session}
		if c.session != "b" || c.input == "hello\nfail now\n" {
			args = append(args, "--agent", "product-lead")
		}
		r := runCmd(t, vars, c.input, args...)
		if r.code != c.code {
			t.Errorf("session %s, input %q: exit %d, want %d\n%s", c.session, c.input, r.code, c.code, r.stderr)
		}
	}
	for _, req := range fm.Requests() {
		for i := 1; i < len(req.Messages); i++ {
			if req.Messages[i].Role == "user" && req.Messages[i-1].Role == "user" {
				t.Fatalf("request %d has two user messages in a row at %d: %q then %q", req.N, i, req.Messages[i-1].Content, req.Messages[i].Content)
			}
		}
	}
}

// A chat whose model fails its first call keeps no session (eight tries
// leave none in sessions list, not eight empty ones), says so, and the
// same command with a working model just works.
func TestChatUnansweredSessionNotKept(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	var failing atomic.Bool
	failing.Store(true)
	fm.Handle(func(req fakemodel.Request) fakemodel.Reply {
		if failing.Load() {
			return fakemodel.Reply{Status: 401} // a wrong key: not retried
		}
		return fakemodel.Reply{Text: "Maren here: " + req.LastUserText()}
	})
	for i := 0; i < 8; i++ {
		args := []string{"chat", "--agent", "product-lead"}
		if i%2 == 1 {
			args = append(args, "--session", "demo")
		}
		r := runCmd(t, vars, "hello\n", args...)
		r.wantCode(t, 1)
		contains(t, "stderr", r.stderr, "the session got no answer, so it is not kept")
	}
	r := runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 {
		t.Fatalf("sessions list after 8 failed tries:\n%s", r.stdout)
	}

	failing.Store(false)
	r = runCmd(t, vars, "hello again\n", "chat", "--agent", "product-lead", "--session", "demo")
	r.wantCode(t, 0)
	contains(t, "stdout", r.stdout, "Maren here: hello again")
	lacks(t, "stdout", r.stdout, "Resuming")
	lacks(t, "stderr", r.stderr, "not kept")
	r = runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "chat/demo") {
		t.Fatalf("sessions list after the retry:\n%s", r.stdout)
	}
}

// Quitting before the first message (/quit, or the end of the input) is
// no failure: nothing on stderr, exit 0, no model call, no session kept.
func TestChatQuitBeforeFirstMessageIsQuiet(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	for _, stdin := range []string{"/quit\n", ""} {
		r := runCmd(t, vars, stdin, "chat", "--agent", "product-lead")
		r.wantCode(t, 0)
		if r.stderr != "" {
			t.Errorf("stdin %q: stderr says:\n%s", stdin, r.stderr)
		}
		contains(t, "stdout", r.stdout, "Maren")
	}
	if fm.Calls() != 0 {
		t.Errorf("%d model calls", fm.Calls())
	}
	r := runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 {
		t.Errorf("sessions were kept:\n%s", r.stdout)
	}
}

// With no source named, an unknown agent's explanation names where the
// agents it lists come from, the built-in samples, not "bundles (none)".
func TestChatUnknownAgentNamesTheSamples(t *testing.T) {
	fm := fakemodel.NewTB(t)
	data := filepath.Join(t.TempDir(), "data")
	r := runCmd(t, map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": fm.URL(), "AGENTBOT_DATA": data}, "", "chat", "--agent", "nope")
	r.wantCode(t, 2)
	contains(t, "stderr", r.stderr, "  known agents: product-lead, retro-coach, story-writer")
	contains(t, "stderr", r.stderr, "  looked in: bundles "+filepath.Join(data, "samples")+" (the sample bundles built into agentbot);")
	lacks(t, "stderr", r.stderr, "bundles (none)")
}
