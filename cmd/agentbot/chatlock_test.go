package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/storage/bolt"
)

// While a chat runs (its input still open), sessions list and show and
// backup reach its store through the control socket, as with serve; a
// second chat (or serve) on the same folder gets an accurate message of
// what to do;
// once the chat ends, the folder is free again.
func TestSessionsAndBackupWhileChatting(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	fm.Enqueue(fakemodel.Reply{Text: "Hi, Maren here."})
	in, feed := io.Pipe()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		done <- run(ctx, &env{args: []string{"chat", "--agent", "product-lead", "--session", "demo"},
			stdin: in, stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }})
	}()
	defer func() {
		feed.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("chat did not end with its input")
		}
	}()
	if _, err := io.WriteString(feed, "hello\n"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first answer", 20*time.Second, func() bool { return strings.Contains(out.String(), "Hi, Maren here.") })

	r := runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	contains(t, "sessions list while chatting", r.stdout, "chat/demo")
	r = runCmd(t, vars, "", "sessions", "show", "demo")
	r.wantCode(t, 0)
	contains(t, "sessions show while chatting", r.stdout, "product-lead")
	file := filepath.Join(t.TempDir(), "chat.db")
	r = runCmd(t, vars, "", "backup", file)
	r.wantCode(t, 0)
	st, err := bolt.Open(copyTo(t, file))
	if err != nil {
		t.Fatal(err)
	}
	list, err := st.ListSessions(ctx)
	st.Close()
	if err != nil || len(list) != 1 || list[0].Key != "chat/demo" || list[0].Messages < 5 {
		t.Fatalf("the backup taken while chatting holds %+v (%v)", list, err)
	}

	r = runCmd(t, vars, "hi\n", "chat", "--agent", "product-lead", "--session", "other")
	r.wantCode(t, 1)
	contains(t, "second chat", r.stderr, "is in use by another agentbot process")
	contains(t, "second chat", r.stderr, "give this one its own folder (--data DIR or AGENTBOT_DATA)")
	contains(t, "second chat", r.stderr, "AGENTBOT_DATABASE_URL")
	contains(t, "second chat", r.stderr, "agentbot backup work through the running one")
	lacks(t, "second chat", r.stderr, "machine that runs it")
	// serve on the same folder says the same.
	fs := fakeslack.New(t)
	svars := map[string]string{"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken()}
	for k, v := range vars {
		svars[k] = v
	}
	r = runCmd(t, svars, "", "serve")
	r.wantCode(t, 1)
	contains(t, "serve", r.stderr, "is in use by another agentbot process")
	contains(t, "serve", r.stderr, "give this one its own folder (--data DIR or AGENTBOT_DATA)")
	if n := fm.Calls(); n != 1 {
		t.Fatalf("%d model calls, want the first chat's one", n)
	}

	feed.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("chat exit %d\n%s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("chat did not end with its input")
	}
	done <- 0 // for the deferred wait
	r = runCmd(t, vars, "", "sessions", "list")
	r.wantCode(t, 0)
	contains(t, "sessions list after the chat", r.stdout, "chat/demo")
}
