package bot_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/mcp"
	"agentbot/engine/mcp/mcptest"
	"agentbot/storage"
)

// refRig is a rig whose sessions get the tools of the reference server
// pkg (from npm, over stdio, started with args) as the server name.
func refRig(t *testing.T, name, pkg string, args ...string) *rig {
	ctx := context.Background()
	t.Helper()
	node, script := mcptest.Reference(t, pkg)
	cfg := &mcp.Config{Servers: []mcp.Server{{Name: name, Transport: mcp.TransportStdio, Command: node,
		Args: append([]string{script}, args...), Timeout: 20 * time.Second, MaxTimeout: time.Minute}}}
	mgr := mcp.NewManager(cfg, mcp.Options{ListBudget: time.Minute})
	t.Cleanup(func() { _ = mgr.Close() })
	r := newRig(t, rigOpts{engine: func(c *engine.Config) {
		c.ExternalTools = mgr.SessionTools(func(*engine.Session) []string { return []string{name} }, nil)
	}})
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	return r
}

// A write_file of 20 KB through server-filesystem asks for approval; the
// message shows the path first and in full, and the content cut with its
// size (it used to cut the whole text at 2,500 bytes, path unseen). The
// approved call writes the whole file.
func TestApprovalShowsWhereAFilesystemWriteGoes(t *testing.T) {
	root := t.TempDir()
	r := refRig(t, "files", "server-filesystem", root)
	content := strings.Repeat("All work and no play makes Jack a dull boy.\n", 20<<10/44)
	target := filepath.Join(root, "notes", "plan.md")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(struct {
		Content string `json:"content"`
		Path    string `json:"path"`
	}{content, target})
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{{ID: "w1", Name: "files__write_file", Arguments: string(args)}}},
		fakemodel.Reply{Text: "Written."})
	thread, _ := r.mention("save the plan", "")
	m := r.waitApprovals(thread, 1)[0]
	body := text(m)
	has(t, body, "`write_file` on the `files` server", "approval message")
	p, c := strings.Index(body, `"path": "`+target+`"`), strings.Index(body, `"content": "All work`)
	if p < 0 || c < 0 || p > c {
		t.Fatalf("path not shown before the content:\n%s", body)
	}
	has(t, body, "KiB in all", "the content's size")
	if len(body) > 4000 {
		t.Fatalf("approval message of %d bytes", len(body))
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("written before the approval")
	}
	r.click(user, m, "approve")
	r.waitText(thread, "Written.")
	got, err := os.ReadFile(target)
	if err != nil || string(got) != content {
		t.Fatalf("file after approval: %d bytes, %v", len(got), err)
	}
	has(t, r.lastToolResult(), "Successfully wrote", "the tool result")
}

// With server-everything (from npm, over stdio): a long operation's
// progress updates its task card in the thread's stream, and the tiny
// image a tool returns is uploaded to the thread.
func TestSlackShowsProgressAndUploadsImages(t *testing.T) {
	r := refRig(t, "ev", "server-everything", "stdio")
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{
		{ID: "p1", Name: "ev__trigger-long-running-operation", Arguments: `{"duration":0.9,"steps":3}`},
		{ID: "i1", Name: "ev__get-tiny-image", Arguments: `{}`},
	}}, fakemodel.Reply{Text: "Here it is."})
	thread, _ := r.mention("show me", "")
	r.waitText(thread, "Here it is.")
	r.waitFor("the image upload", func() bool { return len(r.slack.Uploads()) == 1 })
	up := r.slack.Uploads()[0]
	if up.Filename != "image-1.png" || up.ThreadTS != thread || string(up.Content[1:4]) != "PNG" {
		t.Fatalf("upload = %s in %s, %d bytes", up.Filename, up.ThreadTS, len(up.Content))
	}
	var titles []string
	for _, s := range r.slack.Streams() {
		for _, c := range s.Chunks {
			var chunk struct {
				ID    string `json:"id"`
				Title string `json:"title"`
			}
			if c.Type == "task_update" && json.Unmarshal(c.JSON, &chunk) == nil && chunk.ID == "p1" {
				titles = append(titles, chunk.Title)
			}
		}
	}
	if !strings.Contains(strings.Join(titles, "\n"), "trigger-long-running-operation (33%)") {
		t.Fatalf("task card titles of the long call = %q", titles)
	}
}
