package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/catalog"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/engine/model"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
	"agentbot/storage/pgtest"
	"agentbot/storage/postgres"
)

// projectHarness is a harness on the 6.12 fixture whose sessions share
// documents by project: a key "T/C/thread" is in its channel's project,
// unless binding maps the channel to a named one.
func projectHarness(t *testing.T, binding map[string]string) (*harness, string) {
	t.Helper()
	root := fixtures.Copy(t, fixtures.V612)
	return projectHarnessAt(t, root, binding), root
}

// projectHarnessAt is projectHarness on the BMAD project at root.
func projectHarnessAt(t *testing.T, root string, binding map[string]string) *harness {
	t.Helper()
	h := newHarness(t, harnessOpts{bmad: []string{root}})
	h.cfg.Projects = &engine.Projects{
		Store: h.st,
		Of: func(_ context.Context, key string) (string, error) {
			parts := strings.Split(key, "/")
			if p := binding[parts[0]+"/"+parts[1]]; p != "" {
				return p, nil
			}
			return storage.ProjectOfKey(key), nil
		},
		Root: func(name string) string {
			return storage.Folders{Dir: filepath.Join(h.dir, "data")}.ProjectFolder(name)
		},
	}
	h.eng = engine.New(h.cfg)
	return h
}

// startAs starts a session on key with agent, written by person.
func (h *harness) startAs(key, agentID, person string) *engine.Session {
	h.t.Helper()
	s, _ := h.start(key, agentID)
	s.Person = person
	return s
}

// lastResults are the tool results of the latest request.
func (h *harness) lastResults() []map[string]any {
	reqs := h.fm.Requests()
	return toolResults(h.t, reqs[len(reqs)-1])
}

// The BMAD chain across four threads of one channel: the analyst's brief,
// which the PM finds with list_files and builds a PRD on, which the
// architect reads for the architecture; bmad-help then gets all three,
// with versions, authors and the help tables' outputs matched to them.
func TestProjectBMADChainAcrossThreads(t *testing.T) {
	ctx := context.Background()
	h, root := projectHarness(t, nil)
	analyst := h.startAs("T1/C1/1.1", "analyst", "U-ana")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{planning_artifacts}/product-brief.md", "content": "# Brief\nA checkout for bikes.\n"})}},
		fakemodel.Reply{Text: "The brief is saved."},
	)
	h.turn(analyst, "write the product brief")

	pm := h.startAs("T1/C1/2.2", "pm", "U-pat")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("list_files", map[string]string{"glob": "{planning_artifacts}/*.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/outputs/planning-artifacts/product-brief.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{planning_artifacts}/prd.md", "content": "# PRD\nFrom the brief: a checkout for bikes.\n"})}},
		fakemodel.Reply{Text: "PRD saved."},
	)
	h.turn(pm, "write the PRD from the brief")
	reqs := h.fm.Requests()
	listed := toolResults(t, reqs[len(reqs)-3])
	if files := fmt.Sprint(listed[len(listed)-1]["files"]); !strings.Contains(files, "/outputs/planning-artifacts/product-brief.md") {
		t.Fatalf("the PM's list_files = %v; the analyst's brief is not there", listed[len(listed)-1])
	}
	read := toolResults(t, reqs[len(reqs)-2])
	contains(t, fmt.Sprint(read[len(read)-1]["content"]), "A checkout for bikes.", "the PM reads the brief")

	architect := h.startAs("T1/C1/3.3", "architect", "U-ari")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{planning_artifacts}/prd.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "_bmad-output/planning-artifacts/architecture.md", "content": "# Architecture\nServes the PRD.\n"})}},
		fakemodel.Reply{Text: "Architecture saved."},
	)
	h.turn(architect, "design the architecture")
	reqs = h.fm.Requests()
	read = toolResults(t, reqs[len(reqs)-2])
	contains(t, fmt.Sprint(read[len(read)-1]["content"]), "From the brief", "the architect reads the PRD")

	docs, err := h.st.Documents(ctx, storage.ChannelProject("T1", "C1"))
	if err != nil || len(docs) != 3 {
		t.Fatalf("project documents = %+v, %v", docs, err)
	}
	if d := docs[0]; d.Path != "planning-artifacts/architecture.md" || d.Person != "U-ari" || d.Agent != "architect" || d.Thread != "T1/C1/3.3" || d.Source != "T1/C1" {
		t.Fatalf("newest document = %+v", d)
	}

	helper := h.startAs("T1/C1/4.4", "analyst", "U-ana")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "bmad-help"})}},
		fakemodel.Reply{Text: "Next: epics and stories."},
	)
	h.turn(helper, "what's next?")
	res := h.lastResults()
	state := fmt.Sprint(res[len(res)-1]["project_documents"])
	for _, want := range []string{
		"planning-artifacts/product-brief.md v1 U-ana with analyst",
		"planning-artifacts/prd.md v1 U-pat with pm",
		"prd output of bmad-prd",
		"planning-artifacts/architecture.md v1 U-ari with architect",
		"architecture output of bmad-architecture",
		"product brief output of bmad-product-brief",
	} {
		contains(t, state, want, "bmad-help's load")
	}
	noHostPaths(t, h, root)
}

// The same chain in one thread, the agent switched between steps: each
// new agent's session sees the documents the earlier ones wrote.
func TestProjectChainWithinOneThread(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, nil)
	s := h.startAs("T1/C2/9.9", "analyst", "U1")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{planning_artifacts}/product-brief.md", "content": "brief"})}},
		fakemodel.Reply{Text: "The brief is saved. Should the PRD cover returns too?"},
	)
	h.turn(s, "brief")
	// Switching agents detaches the session; the next one takes the key
	// with a handoff.
	if err := h.st.DetachSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	rec, err := h.st.NewSession(ctx, "T1/C2/9.9")
	if err != nil {
		t.Fatal(err)
	}
	pm := &engine.Session{Session: *rec, Person: "U1"}
	pm.Handoff = engine.Handoff(&s.Session, "<@U1>")
	if _, err := h.eng.Activate(context.Background(), pm, h.agent("pm")); err != nil {
		t.Fatal(err)
	}
	prompt := systemPrompt(pm)
	for _, want := range []string{"## Handoff", "Before you, ", "Mary", "(analyst", "with <@U1>", "/outputs/planning-artifacts/product-brief.md (v1)", `"Should the PRD cover returns too?"`} {
		contains(t, prompt, want, "the PM's system prompt")
	}
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{planning_artifacts}/product-brief.md"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(pm, "read the brief")
	res := h.lastResults()
	if got := fmt.Sprint(res[len(res)-1]["content"]); got != "brief" {
		t.Fatalf("the PM reads %q in the same thread", got)
	}
	// The earlier session is kept.
	if old, err := h.st.SessionByID(ctx, s.ID); err != nil || len(old.Messages) == 0 {
		t.Fatalf("the analyst's session: %v", err)
	}
}

// Handoff says nothing for a session without an agent's work, and quotes
// only a question nobody answered.
func TestHandoffEdges(t *testing.T) {
	if got := engine.Handoff(&transcript.Session{}, "U1"); got != "" {
		t.Fatalf("handoff of an empty session = %q", got)
	}
	s := &transcript.Session{AgentID: "pm", Messages: []transcript.Message{
		{Role: transcript.RoleAssistant, Content: "Which users first?"},
		{Role: transcript.RoleUser, Content: "Riders."},
	}}
	got := engine.Handoff(s, "")
	if strings.Contains(got, "Which users") || !strings.Contains(got, "pm") || !strings.Contains(got, "saved no document") {
		t.Fatalf("handoff = %q", got)
	}
}

// A save based on a version the session has not seen is refused, naming
// who changed the document, where and when; the model reads it and its
// retry lands on top.
func TestProjectStaleSaveRefusedThenRetryLands(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, nil)
	a := h.startAs("T1/C1/1.1", "pm", "U-a")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "A's PRD"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(a, "write")
	b := h.startAs("T1/C1/2.2", "pm", "U-b")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "B's PRD"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "prd.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "A's PRD + B's part"})}},
		fakemodel.Reply{Text: "merged"},
	)
	h.turn(b, "write too")
	reqs := h.fm.Requests()
	refusal := toolResults(t, reqs[len(reqs)-3])
	msg := fmt.Sprint(refusal[len(refusal)-1])
	for _, want := range []string{"changed since you read it", "U-a with pm", "T1/C1/1.1", "read it first"} {
		contains(t, msg, want, "the stale save's refusal")
	}
	hist, err := h.st.DocumentHistory(ctx, storage.ChannelProject("T1", "C1"), "prd.md")
	if err != nil || len(hist) != 2 || hist[0].Person != "U-b" {
		t.Fatalf("history = %+v, %v", hist, err)
	}
	if data, _ := h.st.DocumentData(ctx, storage.ChannelProject("T1", "C1"), "prd.md", 0); string(data) != "A's PRD + B's part" {
		t.Fatalf("latest = %q", data)
	}
}

// appendScript answers each session's request with one edit_output
// append of the line its user asked for, then a text.
func appendScript(req fakemodel.Request) fakemodel.Reply {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == "user" {
		line := strings.TrimPrefix(last.Content, "append ")
		return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": "log.md", "append": line + "\n"})}}
	}
	return fakemodel.Reply{Text: "appended"}
}

// Threads appending to one document at once lose nothing.
func TestProjectConcurrentAppendsAllLand(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, nil)
	h.fm.Handle(appendScript)
	const n = 6
	sessions := make([]*engine.Session, n)
	for i := range sessions {
		sessions[i] = h.startAs(fmt.Sprintf("T1/C1/%d.0", i), "pm", fmt.Sprint("U", i))
	}
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := h.eng.Turn(context.Background(), s, fmt.Sprintf("append line from thread %d", i), h.emit); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	data, err := h.st.DocumentData(ctx, storage.ChannelProject("T1", "C1"), "log.md", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		contains(t, string(data), fmt.Sprintf("line from thread %d\n", i), "the shared log")
	}
}

// Projects are islands: a document of one channel's project answers in
// another's exactly as a missing file does, by path, list or variable;
// channels bound to one project share it.
func TestProjectIsolationAndBinding(t *testing.T) {
	h, _ := projectHarness(t, map[string]string{"T1/C3": "shared", "T1/C4": "shared"})
	for _, k := range []string{"T1/C1/1.1", "T1/C3/1.1"} {
		s := h.startAs(k, "pm", "U1")
		h.fm.Enqueue(
			fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "secret.md", "content": "secret of " + k})}},
			fakemodel.Reply{Text: "ok"},
		)
		h.turn(s, "save")
	}
	probe := func(key string) (read, missing, list string) {
		s := h.startAs(key, "pm", "U2")
		h.fm.Enqueue(
			fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
				call("read_file", map[string]string{"path": "/outputs/secret.md"}),
				call("read_file", map[string]string{"path": "/outputs/never-written.md"}),
				call("list_files", map[string]string{"glob": "/outputs/**"}),
			}},
			fakemodel.Reply{Text: "ok"},
		)
		h.turn(s, "probe")
		r := h.lastResults()
		return fmt.Sprint(r[len(r)-3]), fmt.Sprint(r[len(r)-2]), fmt.Sprint(r[len(r)-1])
	}
	// A DM channel, another channel: both miss the secrets.
	for _, key := range []string{"T1/D9/5.5", "T1/C2/5.5", "T2/C1/5.5"} {
		read, missing, list := probe(key)
		if strings.Contains(read+list, "secret of") || strings.Contains(list, "secret.md") {
			t.Fatalf("%s sees another project's document: %s %s", key, read, list)
		}
		if want := strings.ReplaceAll(missing, "never-written.md", "secret.md"); read != want {
			t.Fatalf("%s: another project's path answers\n%s\nwhile a missing one answers\n%s", key, read, missing)
		}
	}
	// The bound channel reads what its partner wrote.
	read, _, _ := probe("T1/C4/7.7")
	contains(t, read, "secret of T1/C3/1.1", "a channel bound to the same project")
}

// Files shared in one thread are project inputs every thread reads; the
// BMAD root's own _bmad-output is a read-only base layer a save puts a
// version on top of.
func TestProjectInputsAndBaseLayer(t *testing.T) {
	ctx := context.Background()
	h, root := projectHarness(t, nil)
	base := filepath.Join(root, "_bmad-output", "planning-artifacts")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "old-prd.md"), []byte("committed PRD"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A secret in the base layer never becomes a project document: /outputs
	// shows every name, so the deny list applies when the layer is copied.
	if err := os.WriteFile(filepath.Join(root, "_bmad-output", ".env"), []byte("TOKEN=hunter2"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := h.startAs("T1/C1/1.1", "pm", "U1")
	if err := h.eng.KeepInput(context.Background(), a, "U1", "notes.txt", []byte("meeting notes")); err != nil {
		t.Fatal(err)
	}
	// The shared file records the channel it was shared in.
	input, err := h.st.DocumentHistory(ctx, storage.ChannelProject("T1", "C1"), transcript.InputPrefix+"notes.txt")
	if err != nil || len(input) != 1 || input[0].Source != "T1/C1" {
		t.Fatalf("the shared file's history = %+v, %v", input, err)
	}
	b := h.startAs("T1/C1/2.2", "pm", "U2")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
			call("read_file", map[string]string{"path": "/inputs/notes.txt"}),
			call("read_file", map[string]string{"path": "{planning_artifacts}/old-prd.md"}),
			call("read_file", map[string]string{"path": "/outputs/.env"}),
		}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{planning_artifacts}/old-prd.md", "content": "committed PRD, revised"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(b, "read")
	reqs := h.fm.Requests()
	first := toolResults(t, reqs[len(reqs)-2])
	contains(t, fmt.Sprint(first[len(first)-3]["content"]), "meeting notes", "a file shared in another thread")
	contains(t, fmt.Sprint(first[len(first)-2]["content"]), "committed PRD", "the base layer")
	if secret := fmt.Sprint(first[len(first)-1]); strings.Contains(secret, "hunter2") || first[len(first)-1]["error"] == nil {
		t.Fatalf("the base layer's .env reached the model: %s", secret)
	}
	hist, err := h.st.DocumentHistory(ctx, storage.ChannelProject("T1", "C1"), "planning-artifacts/old-prd.md")
	if err != nil || len(hist) != 1 || hist[0].Version != 1 {
		t.Fatalf("a save over the base layer = %+v, %v", hist, err)
	}
	if data, _ := os.ReadFile(filepath.Join(base, "old-prd.md")); string(data) != "committed PRD" {
		t.Fatalf("the BMAD root's file changed to %q", data)
	}
}

// memlog in a project keeps one log for every thread, never uploaded.
func TestProjectMemlogShared(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, nil)
	for i, cmd := range []map[string]any{
		{"command": "init", "workspace": "/outputs/run"},
		{"command": "append", "workspace": "/outputs/run", "text": "second thread was here"},
	} {
		s := h.startAs(fmt.Sprintf("T1/C1/%d.1", i), "pm", "U1")
		h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("memlog", cmd)}}, fakemodel.Reply{Text: "ok"})
		h.turn(s, "log")
		res := h.lastResults()
		if res[len(res)-1]["ok"] != true {
			t.Fatalf("memlog %v: %v", cmd, res[len(res)-1])
		}
	}
	data, err := h.st.DocumentData(ctx, storage.ChannelProject("T1", "C1"), "run/.memlog.md", 0)
	if err != nil || !strings.Contains(string(data), "second thread was here") {
		t.Fatalf("memlog = %q, %v", data, err)
	}
	for _, ev := range h.eventsOf(engine.EventOutput) {
		if strings.Contains(ev.Output.Path, "memlog") {
			t.Fatalf("the memlog was announced for upload: %+v", ev.Output)
		}
	}
}

// bmad-help's load stays under 8 KB with 200 documents in the project.
func TestProjectStateBudget(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, nil)
	project := storage.ChannelProject("T1", "C1")
	for i := range 200 {
		if _, err := h.st.SaveDocument(ctx, project, transcript.DocVersion{Path: fmt.Sprintf("implementation-artifacts/stories/story-%03d.md", i), Person: "U123456789", Agent: "dev"}, 0, []byte("story")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.st.SaveDocument(ctx, project, transcript.DocVersion{Path: "planning-artifacts/prd.md", Person: "U1", Agent: "pm"}, 0, []byte("prd")); err != nil {
		t.Fatal(err)
	}
	s := h.startAs("T1/C1/1.1", "analyst", "U1")
	h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "bmad-help"})}}, fakemodel.Reply{Text: "ok"})
	h.turn(s, "help")
	res := h.lastResults()
	state := fmt.Sprint(res[len(res)-1]["project_documents"])
	b, _ := json.Marshal(state)
	if len(b) > 8<<10 {
		t.Fatalf("the project state is %d bytes", len(b))
	}
	contains(t, state, "planning-artifacts/prd.md v1 U1 with pm", "the matched PRD comes first")
	contains(t, state, "201 documents", "the count")
	contains(t, state, "more (list_files", "the rest, counted")
	t.Logf("project state with 201 documents: %d bytes", len(b))
}

// projectOfKey is the project of a thread key: its channel's.
func projectOfKey(_ context.Context, key string) (string, error) {
	return storage.ProjectOfKey(key), nil
}

// projectEngine is one replica: an engine on st whose working copies of
// projects are under dir.
func projectEngine(t *testing.T, st engineProjectStore, cat *catalog.Catalog, fm *fakemodel.Server, dir string) *engine.Engine {
	return engine.New(engine.Config{
		Catalog: func() *catalog.Catalog { return cat },
		Model: model.New(model.Config{APIKey: "k", BaseURL: fm.URL(), Model: "m",
			Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }}),
		Store:      st,
		Outputs:    st,
		OutputRoot: func(id string) string { d, _ := storage.Folders{Dir: dir}.Session("outputs", id); return d },
		InputRoot:  func(id string) string { d, _ := storage.Folders{Dir: dir}.Session("inputs", id); return d },
		Projects: &engine.Projects{Store: st, Of: projectOfKey,
			Root: storage.Folders{Dir: dir}.ProjectFolder},
	})
}

// engineProjectStore is what a replica needs of the shared store.
type engineProjectStore interface {
	engine.Store
	engine.OutputStore
	engine.ProjectStore
	NewSession(ctx context.Context, key string) (*transcript.Session, error)
}

// Two replicas on one PostgreSQL database share a channel's documents:
// the PM on replica B finds and extends the analyst's brief from replica
// A; replica A, restarted, reads B's version, not its stale copy.
func TestProjectReplicasAndRestartPostgres(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	stA, err := postgres.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer stA.Close()
	stB, err := postgres.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer stB.Close()
	root := fixtures.Copy(t, fixtures.V612)
	cat := catalog.Load(catalog.Options{BMADRoots: []string{root}})
	fm := fakemodel.NewTB(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	a, b := projectEngine(t, stA, cat, fm, dirA), projectEngine(t, stB, cat, fm, dirB)
	turn := func(eng *engine.Engine, st engineProjectStore, key, agent string, replies ...fakemodel.Reply) []map[string]any {
		t.Helper()
		rec, err := st.NewSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		s := &engine.Session{Session: *rec}
		ag, _ := cat.Find(agent)
		if _, err := eng.Activate(context.Background(), s, ag); err != nil {
			t.Fatal(err)
		}
		fm.Enqueue(replies...)
		if _, err := eng.Turn(context.Background(), s, "go", nil); err != nil {
			t.Fatal(err)
		}
		reqs := fm.Requests()
		return toolResults(t, reqs[len(reqs)-1])
	}
	turn(a, stA, "T1/C1/1.1", "analyst",
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{planning_artifacts}/product-brief.md", "content": "brief v1\n"})}},
		fakemodel.Reply{Text: "saved"})
	// Replica A's working copy now holds v1.
	turn(b, stB, "T1/C1/2.2", "pm",
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("list_files", map[string]string{"glob": "{planning_artifacts}/*"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": "{planning_artifacts}/product-brief.md", "append": "B's note\n"})}},
		fakemodel.Reply{Text: "extended"})
	reqs := fm.Requests()
	listed := toolResults(t, reqs[len(reqs)-2])
	contains(t, fmt.Sprint(listed[len(listed)-1]["files"]), "product-brief.md", "replica B's list_files")

	a2 := projectEngine(t, stA, cat, fm, dirA) // replica A after a restart
	res := turn(a2, stA, "T1/C1/3.3", "architect",
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{planning_artifacts}/product-brief.md"})}},
		fakemodel.Reply{Text: "read"})
	if got := fmt.Sprint(res[len(res)-1]["content"]); got != "brief v1\nB's note\n" {
		t.Fatalf("restarted replica A reads %q", got)
	}
}

// The isolation layout of TestSessionIsolationEndToEnd (the data folder
// inside the project) across projects: a thread of another channel cannot
// reach a project's document by its working-copy path, its session
// folder, a relative name or /outputs, and no listing shows it.
func TestProjectIsolationInsideTheProject(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "team")
	fixtures.CopyDir(t, filepath.Join(fixtures.Bundles(t), "product-team"), bundle)
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
		Store:   st, Outputs: st, Hidden: []string{data},
		OutputRoot: func(id string) string { d, _ := st.OutputDir(id); return d },
		InputRoot:  func(id string) string { d, _ := st.InputDir(id); return d },
		Projects: &engine.Projects{Store: st, Of: projectOfKey,
			Root: storage.Folders{Dir: data}.ProjectFolder},
	})
	a, _ := cat.Find("product-lead")
	alice, _ := live(st.NewSession(ctx, "T1/C1/1.1"))
	if _, err := eng.Activate(context.Background(), alice, a); err != nil {
		t.Fatal(err)
	}
	fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "secret-plan.md", "content": "alice's plan"})}}, fakemodel.Reply{Text: "saved"})
	if _, err := eng.Turn(t.Context(), alice, "save it", nil); err != nil {
		t.Fatal(err)
	}
	bob, _ := live(st.NewSession(ctx, "T1/C2/1.1"))
	if _, err := eng.Activate(context.Background(), bob, a); err != nil {
		t.Fatal(err)
	}
	working, _ := filepath.Rel(bundle, storage.Folders{Dir: data}.ProjectFolder(storage.ChannelProject("T1", "C1")))
	paths := []string{
		"/project/" + filepath.ToSlash(working) + "/documents/secret-plan.md",
		"/project/data/outputs/" + alice.ID + "/secret-plan.md",
		"secret-plan.md", "/outputs/secret-plan.md", "{output_folder}/secret-plan.md",
	}
	var calls []fakemodel.ToolCall
	for _, p := range paths {
		calls = append(calls, call("read_file", map[string]string{"path": p}))
	}
	calls = append(calls, call("list_files", map[string]string{"glob": "/project/**/secret-plan.md"}),
		call("list_files", map[string]string{"glob": "/outputs/**"}))
	fm.Enqueue(fakemodel.Reply{ToolCalls: calls}, fakemodel.Reply{Text: "nothing"})
	if _, err := eng.Turn(t.Context(), bob, "read alice's plan", nil); err != nil {
		t.Fatal(err)
	}
	reqs := fm.Requests()
	res := toolResults(t, reqs[len(reqs)-1])
	if strings.Contains(strings.Join(flat(res), " "), "alice's plan") {
		t.Fatalf("bob read alice's document: %v", res)
	}
	for i := range paths {
		if e, _ := res[i]["error"].(string); e == "" {
			t.Fatalf("%s: %v", paths[i], res[i])
		}
	}
	for _, r := range res[len(paths):] {
		if files, _ := r["files"].([]any); len(files) != 0 {
			t.Fatalf("a listing shows %v", files)
		}
	}
}

// An append whose version landed but whose record the transcript lost (the
// process stopped between the store and the session's save) is not made
// twice when the model, told the call was interrupted, calls it again; an
// append the transcript knows of is made again when asked.
func TestProjectAppendNotRepeatedAfterACrash(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, nil)
	s := h.startAs("T1/C1/1.1", "pm", "U1")
	appendLine := func() {
		h.fm.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": "log.md", "append": "line A\n"})}},
			fakemodel.Reply{Text: "ok"})
		h.turn(s, "append")
	}
	appendLine()
	s.Wrote = nil // what a resume from the last saved record knows
	appendLine()
	project := storage.ChannelProject("T1", "C1")
	if data, _ := h.st.DocumentData(ctx, project, "log.md", 0); string(data) != "line A\n" {
		t.Fatalf("after the repeated call the log is %q", data)
	}
	appendLine() // now recorded: a real second append
	if data, _ := h.st.DocumentData(ctx, project, "log.md", 0); string(data) != "line A\nline A\n" {
		t.Fatalf("a second append was not made: %q", data)
	}
	if hist, _ := h.st.DocumentHistory(ctx, project, "log.md"); len(hist) != 2 {
		t.Fatalf("%d versions, want 2", len(hist))
	}
}

// BMAD's project_knowledge folder ({project-root}/docs in the 6.12
// config) is a read-only base layer like _bmad-output: agents read it,
// and a save there puts a project version on top, which every thread
// then reads there, while the BMAD root's file stays as it was.
func TestProjectKnowledgeBaseLayer(t *testing.T) {
	ctx := context.Background()
	h, root := projectHarness(t, nil)
	docs := filepath.Join(root, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "domain.md"), []byte("bikes have two wheels"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := h.startAs("T1/C1/1.1", "pm", "U1")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{project_knowledge}/domain.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "{project_knowledge}/domain.md", "content": "bikes have two wheels and a bell"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(a, "revise the domain notes")
	reqs := h.fm.Requests()
	read := toolResults(t, reqs[len(reqs)-2])
	contains(t, fmt.Sprint(read[len(read)-1]["content"]), "bikes have two wheels", "the project_knowledge base layer")
	saved := toolResults(t, reqs[len(reqs)-1])
	if saved[len(saved)-1]["path"] != "/outputs/docs/domain.md" {
		t.Fatalf("a save into project_knowledge was refused: %v", saved[len(saved)-1])
	}
	hist, err := h.st.DocumentHistory(ctx, storage.ChannelProject("T1", "C1"), "docs/domain.md")
	if err != nil || len(hist) != 1 || hist[0].Version != 1 || hist[0].Agent == "" {
		t.Fatalf("a save over the project_knowledge base layer = %+v, %v", hist, err)
	}
	if data, _ := os.ReadFile(filepath.Join(docs, "domain.md")); string(data) != "bikes have two wheels" {
		t.Fatalf("the BMAD root's file changed to %q", data)
	}
	// Another thread reads the project's version where the base was.
	b := h.startAs("T1/C1/2.2", "architect", "U2")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/project/docs/domain.md"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(b, "read the domain notes")
	res := h.lastResults()
	contains(t, fmt.Sprint(res[len(res)-1]["content"]), "and a bell", "another thread reading project_knowledge")
}

// A save in a project stores the document's bytes once, in the project:
// the session's output record points at the project's version, uploads
// read it from there, and a document a session stored before projects
// stays readable from the session's outputs.
func TestProjectSaveStoresBytesOnce(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, nil)
	s := h.startAs("T1/C1/1.1", "pm", "U1")
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "# PRD\none copy\n"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": "prd.md", "append": "more\n"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(s, "write the PRD")
	project := storage.ChannelProject("T1", "C1")
	evs := h.eventsOf(engine.EventOutput)
	if len(evs) != 2 {
		t.Fatalf("%d output events, want 2", len(evs))
	}
	for i, want := range []string{"# PRD\none copy\n", "# PRD\none copy\nmore\n"} {
		o := *evs[i].Output
		if o.Project != project || o.DocVersion != i+1 {
			t.Errorf("output %+v does not name the project's version %d", o, i+1)
		}
		if data, err := h.st.OutputData(ctx, s.ID, o.Path, o.Version); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("v%d stored again for the session: %q, %v", o.Version, data, err)
		}
		if data, err := h.eng.OutputData(context.Background(), s.ID, o); err != nil || string(data) != want {
			t.Errorf("OutputData(v%d) = %q, %v; want %q", o.Version, data, err, want)
		}
	}
	// A document saved before projects: in the session's outputs only.
	old := transcript.Output{Path: "old.md", Version: 1, Size: 3}
	if err := h.st.PutOutput(ctx, s.ID, old, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if data, err := h.eng.OutputData(context.Background(), s.ID, old); err != nil || string(data) != "old" {
		t.Errorf("an output saved before projects = %q, %v", data, err)
	}
}

// TestProjectBindingUnreadableFailsAsTheStore: when the store cannot say
// which project a thread is in (a connection reset), the turn fails as
// the store's (SaveError: the front end keeps the message queued) before
// the model is called, instead of guessing the channel's own project; once
// the store answers, the document lands in the project the channel is
// bound to, and nowhere else.
func TestProjectBindingUnreadableFailsAsTheStore(t *testing.T) {
	ctx := context.Background()
	h, _ := projectHarness(t, map[string]string{"T1/C3": "shared"})
	of := h.cfg.Projects.Of
	var fail sync.Mutex
	failing := false
	h.cfg.Projects.Of = func(ctx context.Context, key string) (string, error) {
		fail.Lock()
		defer fail.Unlock()
		if failing {
			return "", errors.New("read tcp 127.0.0.1:5432: connection reset by peer")
		}
		return of(ctx, key)
	}
	s := h.startAs("T1/C3/1.1", "pm", "U1")
	fail.Lock()
	failing = true
	fail.Unlock()
	calls := h.fm.Calls()
	_, err := h.eng.Turn(context.Background(), s, "save", h.emit)
	if _, ok := errors.AsType[*engine.SaveError](err); !ok {
		t.Fatalf("a turn whose project could not be read: %v, want a SaveError", err)
	}
	if h.fm.Calls() != calls {
		t.Fatal("the model was called without knowing the project")
	}
	fail.Lock()
	failing = false
	fail.Unlock()
	h.fm.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "plan.md", "content": "the plan"})}},
		fakemodel.Reply{Text: "ok"},
	)
	h.turn(s, "save")
	for project, want := range map[string]int{"shared": 1, storage.ProjectOfKey("T1/C3/1.1"): 0} {
		docs, err := h.st.Documents(ctx, project)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range docs {
			if strings.HasSuffix(d.Path, "plan.md") {
				n++
			}
		}
		if n != want {
			t.Fatalf("project %s holds plan.md %d times, want %d", project, n, want)
		}
	}
}
