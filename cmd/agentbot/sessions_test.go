package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

func TestSessionsListShowExportPrune(t *testing.T) {
	_, vars, chat := briefChat(t)
	id := sessionID(t, chat.stdout)
	data := vars["AGENTBOT_DATA"]

	r := runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	var row string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(l, id+" ") {
			row = l
		}
	}
	if row == "" {
		t.Fatalf("list lacks session %s:\n%s", id, r.stdout)
	}
	contains(t, "list row", row, "product-lead")
	contains(t, "list row", row, "chat/product-lead/")

	r = runCmd(t, vars, "", "sessions", "show", id)
	r.wantCode(t, 0)
	contains(t, "show", r.stdout, "Agent:    product-lead")
	contains(t, "show", r.stdout, "Usage:    3 calls")
	contains(t, "show", r.stdout, "Output:   product-brief.md v1")

	r = runCmd(t, vars, "", "sessions", "export", id)
	r.wantCode(t, 0)
	md := r.stdout
	for _, want := range []string{"*brief", "A checkout reorder button", "tool `preload_workflow`", "tool `save_output`", "Who is the reorder button for?"} {
		contains(t, "export", md, want)
	}
	lacks(t, "export", md, "<persona>") // the system prompt stays out

	file := filepath.Join(t.TempDir(), "session.md")
	// -o after the ID, as the usage line shows it, and before it.
	for i, args := range [][]string{{"export", id, "-o", file}, {"export", "-o", file + "2", id}} {
		f := file + []string{"", "2"}[i]
		r = runCmd(t, vars, "", append([]string{"sessions"}, args...)...)
		r.wantCode(t, 0)
		contains(t, "export -o", r.stdout, "wrote "+f)
		written, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if string(written) != md {
			t.Errorf("%v wrote other text than export to stdout", args)
		}
	}

	outDir := filepath.Join(data, "outputs", id)
	// The document is the terminal project's: pruning the session keeps it.
	doc := filepath.Join(storage.Folders{Dir: data}.ProjectFolder(storage.TerminalProject), "documents", "product-brief.md")
	if _, err := os.Stat(doc); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := os.Stat(doc); err != nil {
			t.Errorf("the project's document went with the session: %v", err)
		}
	}()
	r = runCmd(t, vars, "", "sessions", "prune", "--older-than", "1ns")
	r.wantCode(t, 0)
	contains(t, "prune", r.stdout, "removed 1 session")
	contains(t, "prune", r.stdout, id)
	if _, err := os.Stat(outDir); !os.IsNotExist(err) {
		t.Errorf("output folder still there after prune: %v", err)
	}
	r = runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	lacks(t, "list after prune", r.stdout, id)
	r = runCmd(t, vars, "", "sessions", "show", id)
	r.wantCode(t, 1)
}

func TestSessionsByKey(t *testing.T) {
	_, vars, chat := briefChat(t)
	key := sessionLine.FindStringSubmatch(chat.stdout)[2]
	r := runCmd(t, vars, "", "sessions", "show", "chat/"+key)
	r.wantCode(t, 0)
	contains(t, "show by key", r.stdout, "ID:       "+sessionID(t, chat.stdout))
	r = runCmd(t, vars, "", "sessions", "export", "chat/"+key)
	r.wantCode(t, 0)
	contains(t, "export by key", r.stdout, "A checkout reorder button")
	r = runCmd(t, vars, "", "sessions", "show", "chat/nosuch")
	r.wantCode(t, 1)
	contains(t, "unknown key", r.stderr, "not found")
}

func TestSessionsErrors(t *testing.T) {
	vars := map[string]string{"AGENTBOT_DATA": filepath.Join(t.TempDir(), "data")}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no subcommand", []string{"sessions"}, 2, "usage: agentbot sessions"},
		{"unknown subcommand", []string{"sessions", "frob"}, 2, `unknown subcommand "frob"`},
		{"show unknown id", []string{"sessions", "show", "nosuchid"}, 1, "not found"},
		{"export unknown id", []string{"sessions", "export", "nosuchid"}, 1, "not found"},
		{"show without id", []string{"sessions", "show"}, 2, "which session?"},
		{"prune without age", []string{"sessions", "prune"}, 2, "--older-than"},
		{"bad duration", []string{"sessions", "prune", "--older-than", "soon"}, 2, "soon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, vars, "", tc.args...)
			r.wantCode(t, tc.code)
			contains(t, "stderr", r.stderr, tc.msg)
		})
	}
	// An empty store lists nothing but the header.
	r := runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ID") {
		t.Errorf("empty list:\n%s", r.stdout)
	}
}

// prune never goes through the control socket: while another process holds
// the bbolt store it says serve prunes by itself, and removes nothing.
func TestSessionsPruneWhileHeld(t *testing.T) {
	_, vars, chat := briefChat(t)
	id := sessionID(t, chat.stdout)
	st, err := bolt.Open(vars["AGENTBOT_DATA"])
	if err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, vars, "", "sessions", "prune", "--older-than", "1ns")
	r.wantCode(t, 1)
	contains(t, "prune while held", r.stderr, "prunes by itself with AGENTBOT_SESSION_TTL")
	st.Close()
	r = runCmd(t, vars, "", "sessions", "show", id)
	r.wantCode(t, 0)
}

// show, export and delete take the name chat's banner gives ("resume:
// agentbot chat --session NAME"), as well as the id and the key.
func TestSessionsByChatName(t *testing.T) {
	_, vars, chat := briefChat(t)
	id := sessionID(t, chat.stdout)
	name := sessionLine.FindStringSubmatch(chat.stdout)[2]
	r := runCmd(t, vars, "", "sessions", "show", name)
	r.wantCode(t, 0)
	contains(t, "show by chat name", r.stdout, "ID:       "+id)
	r = runCmd(t, vars, "", "sessions", "export", name)
	r.wantCode(t, 0)
	contains(t, "export by chat name", r.stdout, "# Session "+id)
	r = runCmd(t, vars, "", "sessions", "show", "product-lead/nosuch")
	r.wantCode(t, 1)
	contains(t, "unknown chat name", r.stderr, "not found")
}

// An export labels the runtime's notes as such: the session start facts
// are not a User line, and the user's menu pick keeps its words.
func TestSessionsExportLabelsRuntimeNotes(t *testing.T) {
	_, vars, chat := briefChat(t)
	r := runCmd(t, vars, "", "sessions", "export", sessionID(t, chat.stdout))
	r.wantCode(t, 0)
	contains(t, "export", r.stdout, "\n**Runtime note:**\n\n[session start]")
	contains(t, "export", r.stdout, "\n**User:**\n\n*brief\n")
	lacks(t, "export", r.stdout, "**User:**\n\n[session start]")
	lacks(t, "export", r.stdout, "**User:**\n\n(The user picked")
}

// export -o refuses to overwrite a file without --force, as backup does,
// and leaves the file as it was.
func TestSessionsExportRefusesToOverwrite(t *testing.T) {
	_, vars, chat := briefChat(t)
	id := sessionID(t, chat.stdout)
	file := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(file, []byte("my own notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, vars, "", "sessions", "export", id, "-o", file)
	r.wantCode(t, 1)
	contains(t, "stderr", r.stderr, file+" exists; choose another name or use --force")
	if b, _ := os.ReadFile(file); string(b) != "my own notes\n" {
		t.Fatalf("the file was changed without --force: %q", b)
	}
	r = runCmd(t, vars, "", "sessions", "export", id, "-o", file, "--force")
	r.wantCode(t, 0)
	if b, _ := os.ReadFile(file); !strings.HasPrefix(string(b), "# Session "+id) {
		t.Fatalf("--force did not write the export: %q", b)
	}
	// A folder that does not exist is an error, not a crash.
	r = runCmd(t, vars, "", "sessions", "export", id, "-o", filepath.Join(t.TempDir(), "no", "such", "dir.md"))
	r.wantCode(t, 1)
	contains(t, "stderr", r.stderr, "agentbot sessions export:")
}

// sessions delete removes one session and its working folder, by id or
// chat name, and says that the documents it saved stay in its project,
// which they do; the other sessions stay. While another process holds the store it removes
// nothing and says why.
func TestSessionsDelete(t *testing.T) {
	fm, vars, chat := briefChat(t)
	id := sessionID(t, chat.stdout)
	data := vars["AGENTBOT_DATA"]
	fm.Enqueue(fakemodel.Reply{Text: "Hello again."})
	other := runCmd(t, vars, "hi\n", "chat", "--agent", "product-lead", "--session", "keep-me")
	other.wantCode(t, 0)
	otherID := sessionID(t, other.stdout)

	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	r := runCmd(t, vars, "", "sessions", "delete", id)
	r.wantCode(t, 1)
	contains(t, "delete while held", r.stderr, "stop it to delete sessions by hand")
	st.Close()
	r = runCmd(t, vars, "", "sessions", "show", id)
	r.wantCode(t, 0) // nothing was deleted

	outDir := filepath.Join(data, "outputs", id)
	if _, err := os.Stat(outDir); err != nil {
		t.Fatal(err)
	}
	// The document is the terminal project's: deleting the session keeps it.
	doc := filepath.Join(storage.Folders{Dir: data}.ProjectFolder(storage.TerminalProject), "documents", "product-brief.md")
	if _, err := os.Stat(doc); err != nil {
		t.Fatal(err)
	}
	r = runCmd(t, vars, "", "sessions", "delete", id)
	r.wantCode(t, 0)
	contains(t, "delete", r.stdout, "deleted session "+id)
	contains(t, "delete", r.stdout, "the documents it saved stay in its project")
	lacks(t, "delete", r.stdout, "with its documents")
	if _, err := os.Stat(outDir); !os.IsNotExist(err) {
		t.Errorf("the documents folder is still there: %v", err)
	}
	if _, err := os.Stat(doc); err != nil {
		t.Errorf("the project's document went with the session: %v", err)
	}
	r = runCmd(t, vars, "", "sessions", "show", id)
	r.wantCode(t, 1)
	r = runCmd(t, vars, "", "sessions", "delete", id)
	r.wantCode(t, 1)
	contains(t, "delete again", r.stderr, "not found")
	r = runCmd(t, vars, "", "sessions", "delete")
	r.wantCode(t, 2)
	contains(t, "delete without id", r.stderr, "which session?")

	// By the chat name; the list is then empty but for the header.
	r = runCmd(t, vars, "", "sessions", "list")
	contains(t, "list", r.stdout, otherID)
	r = runCmd(t, vars, "", "sessions", "delete", "keep-me")
	r.wantCode(t, 0)
	contains(t, "delete by name", r.stdout, "deleted session "+otherID)
	r = runCmd(t, vars, "", "sessions", "list")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 {
		t.Errorf("sessions left after deleting both:\n%s", r.stdout)
	}
}
