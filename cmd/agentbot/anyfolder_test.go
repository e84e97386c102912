package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agentbot/engine/fakemodel"
)

// The binary, copied alone into an empty folder, chats with the sample
// agent built into it, as the README's terminal section says: no bundles
// folder, no flag but the agent, the model from its three variables. The
// sample lands in the default data folder, the user's state folder, and
// the session is kept there; nothing is written in the working folder.
func TestBinaryChatsFromAnyFolder(t *testing.T) {
	built := buildBinary(t, "-X main.version=v0.0.0-anyfolder")
	dir := t.TempDir()
	bin := filepath.Join(dir, "agentbot")
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	fm := fakemodel.NewTB(t)
	fm.Enqueue(fakemodel.Reply{Text: "Maren here: who is the reorder button for?"})
	cmd := exec.Command(bin, "chat", "--agent", "product-lead")
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin",
		"OPENAI_BASE_URL=" + fm.URL(), "OPENAI_API_KEY=sk-test", "AGENTBOT_MODEL=gpt-4.1"}
	cmd.Stdin = strings.NewReader("*brief\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agentbot chat in an empty folder: %v\n%s", err, out)
	}
	got := string(out)
	contains(t, "chat", got, "Maren")                                      // the greeting of the built-in sample
	contains(t, "chat", got, "Maren here: who is the reorder button for?") // the model's answer
	lacks(t, "chat", got, "no agent")
	if fm.Calls() != 1 {
		t.Fatalf("%d model calls, want 1", fm.Calls())
	}
	state := filepath.Join(home, ".local", "state", "agentbot")
	if _, err := os.Stat(filepath.Join(state, "samples")); err != nil {
		t.Errorf("the built-in sample was not written into the data folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "agentbot.db")); err != nil {
		t.Errorf("no store in the default data folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("a data folder in the working folder: %v", err)
	}
}
