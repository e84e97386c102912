package bot_test

import (
	"context"
	"testing"

	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// A file shared in a project thread becomes a version of the project's
// document by the person whose message carried it: Alice's version is
// hers, and Bob's, shared in Alice's thread, is his.
func TestSharedFileVersionIsBySharer(t *testing.T) {
	ctx := context.Background()
	const bob = "U0BOB01"
	r := projectRig(t)
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "analyst"); err != nil {
		t.Fatal(err)
	}
	share := func(who, thread, content string) string {
		f := r.slack.AddFile("notes.md", []byte(content))
		ts := r.slack.NextTS()
		ev := map[string]any{"type": "message", "subtype": "file_share", "user": who, "channel": channel, "channel_type": "channel",
			"ts": ts, "text": "my notes", "files": []any{f}}
		if thread == "" {
			ev["type"], ev["text"] = "app_mention", "<@"+r.slack.BotUserID()+"> my notes"
			delete(ev, "subtype")
		} else {
			ev["thread_ts"] = thread
		}
		r.slack.SendEvent(ev)
		return ts
	}
	r.model.Enqueue(fakemodel.Reply{Text: "Read Alice's notes."}, fakemodel.Reply{Text: "Read Bob's notes."})
	thread := share(user, "", "Alice's notes")
	r.waitCalls(1)
	share(bob, thread, "Bob's notes")
	r.waitCalls(2)
	path := transcript.InputPrefix + "notes.md"
	var hist []storage.DocVersion
	r.waitFor("two versions of "+path, func() bool {
		var err error
		hist, err = r.st.DocumentHistory(ctx, storage.ChannelProject(r.slack.TeamID(), channel), path)
		return err == nil && len(hist) == 2
	})
	if hist[0].Version != 2 || hist[0].Person != bob || hist[1].Version != 1 || hist[1].Person != user {
		t.Fatalf("versions of %s (newest first): %+v; want 2 by %s, 1 by %s", path, hist, bob, user)
	}
}
