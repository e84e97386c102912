package bot_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/storage"
)

// outputSpy records the documents read from the output store.
type outputSpy struct {
	engine.OutputStore
	mu    sync.Mutex
	calls []string // "session path vN"
}

func (s *outputSpy) OutputData(ctx context.Context, id, path string, version int) ([]byte, error) {
	s.mu.Lock()
	s.calls = append(s.calls, fmt.Sprintf("%s %s v%d", id, path, version))
	s.mu.Unlock()
	return s.OutputStore.OutputData(ctx, id, path, version)
}

func (s *outputSpy) read() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// A saved document is uploaded from the store, not from a local file: with
// the local folder gone (a replica that never had it), the next turn still
// reads and edits the document, and its upload has the right bytes.
func TestUploadsComeFromStore(t *testing.T) {
	ctx := context.Background()
	spy := &outputSpy{}
	r := newRig(t, rigOpts{engine: func(c *engine.Config) { spy.OutputStore = c.Outputs; c.Outputs = spy }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "# PRD\nalpha\n"})}},
		fakemodel.Reply{Text: "Saved."},
	)
	thread, _ := r.mention("write it", "")
	r.waitFor("the upload", func() bool { return len(r.slack.Uploads()) == 1 })
	calls := spy.read()
	if len(calls) != 1 || !strings.HasSuffix(calls[0], " prd.md v1") {
		t.Fatalf("store reads for the upload = %q", calls)
	}
	if up := r.slack.Uploads()[0]; string(up.Content) != "# PRD\nalpha\n" {
		t.Fatalf("upload = %q", up.Content)
	}
	id := strings.Fields(calls[0])[0]
	dir, err := r.st.OutputDir(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/outputs/prd.md"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("edit_output", map[string]string{"path": "prd.md", "append": "beta\n"})}},
		fakemodel.Reply{Text: "Edited."},
	)
	r.reply("add beta", thread)
	r.waitFor("the second upload", func() bool { return len(r.slack.Uploads()) == 2 })
	if up := r.slack.Uploads()[1]; string(up.Content) != "# PRD\nalpha\nbeta\n" || up.Title != "prd.md, v2" {
		t.Fatalf("second upload = %q (%s)", up.Content, up.Title)
	}
	reqs := r.model.Requests()
	read := reqs[len(reqs)-2].Messages
	has(t, read[len(read)-1].Content, "alpha", "read_file after the folder was lost")
	// v1 again to restore the lost folder, then v2 for its upload.
	if calls := spy.read(); len(calls) != 3 || calls[1] != id+" prd.md v1" || calls[2] != id+" prd.md v2" {
		t.Fatalf("store reads = %q", calls)
	}
}
