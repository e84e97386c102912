package bot_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

func call(name string, args any) fakemodel.ToolCall {
	b, _ := json.Marshal(args)
	return fakemodel.ToolCall{Name: name, Arguments: string(b)}
}

// Mention, picker, agent greeting with menu buttons; a menu button starts a
// workflow (one model call) whose answer streams into the thread, and the
// document it saves arrives in the same thread as a file.
func TestMentionPickerGreetingWorkflowStreamAndUpload(t *testing.T) {
	r := newRig(t, rigOpts{})
	thread, env := r.mention("", "")
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	picker := r.waitBotMessages(thread, 1)[0]
	has(t, text(picker), "Which agent should help", "picker")
	btns := buttons(t, picker)
	if btns["pick:product-lead"] != "product-lead" || btns["pick:retro-coach"] != "retro-coach" {
		t.Fatalf("picker buttons = %v", btns)
	}
	if _, ok := btns["pick:story-writer"]; ok {
		t.Fatal("a non-entry-point agent is offered")
	}
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: picker.TS, ThreadTS: thread, ActionID: "pick:product-lead", Value: "product-lead"})
	msgs := r.waitBotMessages(thread, 2)
	greet := msgs[1]
	has(t, text(greet), "Maren", "greeting")
	menu := buttons(t, greet)
	if menu["menu:1"] != "*brief" {
		t.Fatalf("menu buttons = %v", menu)
	}
	r.waitFor("the picker to close", func() bool {
		m, _ := r.slack.Message(channel, picker.TS)
		return strings.Contains(m.Text, "picked") && len(buttons(t, m)) == 0
	})
	if r.model.Calls() != 0 {
		t.Fatalf("picking an agent made %d model calls", r.model.Calls())
	}

	// The *brief button: preload + one model call, answer streamed.
	r.model.Enqueue(fakemodel.Reply{Text: "Let's write a brief. What's the feature idea?", Chunks: 4})
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: greet.TS, ThreadTS: thread, ActionID: "menu:1", Value: "*brief"})
	r.waitFor("the stream to stop", func() bool {
		ss := r.slack.Streams()
		return len(ss) == 1 && ss[0].Stopped
	})
	if r.model.Calls() != 1 {
		t.Fatalf("workflow start took %d model calls", r.model.Calls())
	}
	s := r.slack.Streams()[0]
	if s.ThreadTS != thread || s.RecipientUserID != user || s.RecipientTeamID == "" {
		t.Fatalf("stream = %+v", s)
	}
	has(t, s.Text, "What's the feature idea?", "streamed answer")
	var sawTask bool
	for _, c := range s.Chunks {
		if c.Type == "task_update" && strings.Contains(string(c.JSON), "loading workflow product-brief") {
			sawTask = true
		}
	}
	if !sawTask {
		t.Fatalf("no task_update for the preload: %+v", s.Chunks)
	}

	// A reply in the thread (no mention) continues; save_output is uploaded.
	doc := "# Brief: reorder\n\nRepeat buyers rebuild carts by hand.\n"
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "brief-reorder.md", "content": doc})}},
		fakemodel.Reply{Text: "Saved the first section. Who has this problem most?"},
	)
	r.reply("One-click reorder of a past cart", thread)
	r.waitFor("the upload", func() bool { return len(r.slack.Uploads()) == 1 })
	up := r.slack.Uploads()[0]
	if up.ThreadTS != thread || up.ChannelID != channel || string(up.Content) != doc || up.Filename != "brief-reorder.md" || !strings.Contains(up.InitialComment, "brief-reorder.md") {
		t.Fatalf("upload = %+v", up)
	}
	// A re-save is a new version.
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "brief-reorder.md", "content": doc + "\nUsers: B2B.\n"})}},
		fakemodel.Reply{Text: "Updated."},
	)
	r.reply("B2B buyers", thread)
	r.waitFor("the second upload", func() bool { return len(r.slack.Uploads()) == 2 })
	if up := r.slack.Uploads()[1]; up.Title != "brief-reorder.md, v2" {
		t.Fatalf("re-save title = %q", up.Title)
	}
}

// A channel default skips the picker; a message arriving mid-turn is queued,
// persisted and answered after the first, in order.
func TestChannelDefaultAndQueuedMessage(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "retro-coach"); err != nil {
		t.Fatal(err)
	}
	r.model.Enqueue(
		fakemodel.Reply{Text: "first answer", Delay: 700 * time.Millisecond},
		fakemodel.Reply{Text: "second answer"},
	)
	thread, _ := r.mention("we had an outage yesterday", "")
	r.waitFor("the first model call", func() bool { return r.model.Calls() == 1 })
	r.reply("it lasted two hours", thread)
	r.waitFor("both answers", func() bool {
		return r.model.Calls() == 2 && len(r.slack.Streams()) == 2 && r.slack.Streams()[1].Stopped
	})
	greet := r.botMessages(thread)[0]
	has(t, text(greet), "Dario", "default agent greets without a picker")
	reqs := r.model.Requests()
	second := reqs[1].Messages
	var order []string
	for _, m := range second {
		if m.Role == "user" && (strings.Contains(m.Content, "outage") || strings.Contains(m.Content, "two hours")) {
			order = append(order, m.Content)
		}
		if m.Role == "assistant" && m.Content == "first answer" {
			order = append(order, m.Content)
		}
	}
	if strings.Join(order, "|") != "we had an outage yesterday|first answer|it lasted two hours" {
		t.Fatalf("second request order = %q", order)
	}
	ss := r.slack.Streams()
	if !strings.Contains(ss[0].Text, "first answer") || !strings.Contains(ss[1].Text, "second answer") {
		t.Fatalf("answers = %q / %q", ss[0].Text, ss[1].Text)
	}
}

// A duplicate envelope (Slack's retry) and a retry after a restart are
// processed once; app_mention and message for one message count once.
func TestDedupeAcrossRetriesAndRestart(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Handle(func(req fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: "answer to " + req.LastUserText()}
	})
	thread, env := r.mention("hello, a quick question", "")
	// The same message also arrives as message.channels.
	r.slack.SendEvent(map[string]any{"type": "message", "user": user, "channel": channel, "channel_type": "channel",
		"text": "<@" + r.slack.BotUserID() + "> hello, a quick question", "ts": thread})
	if _, err := r.slack.Redeliver(env, "timeout"); err != nil {
		t.Fatal(err)
	}
	r.waitFor("one answer", func() bool {
		return r.model.Calls() >= 1 && len(r.slack.Streams()) >= 1 && r.slack.Streams()[0].Stopped
	})
	r.restart()
	if _, err := r.slack.Redeliver(env, "http_error"); err != nil {
		t.Fatal(err)
	}
	_, env2 := r.reply("second", thread)
	r.waitFor("the second answer", func() bool {
		return r.model.Calls() == 2 && len(r.slack.Streams()) == 2 && r.slack.Streams()[1].Stopped
	})
	time.Sleep(200 * time.Millisecond)
	if r.model.Calls() != 2 {
		t.Fatalf("model calls = %d, want 2 (duplicates processed)", r.model.Calls())
	}
	if _, err := r.slack.WaitAck(env2, time.Second); err != nil {
		t.Fatal(err)
	}
	// Every envelope, duplicates included, was acked.
	if n := len(r.slack.Acks()); n != len(r.slack.Envelopes()) {
		t.Fatalf("acks %d for %d envelopes", n, len(r.slack.Envelopes()))
	}
}

// A 429 on chat.postMessage is retried after Retry-After.
func TestPostMessageRateLimitRetried(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.NoStreaming = true }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.slack.RateLimitNext("chat.postMessage", 1, time.Second)
	thread, _ := r.mention("", "")
	msgs := r.waitBotMessages(thread, 1)
	has(t, text(msgs[0]), "Maren", "greeting after the rate limit")
	calls := r.slack.CallsTo("chat.postMessage")
	if len(calls) < 2 || calls[0].Status != 429 {
		t.Fatalf("postMessage calls = %+v", calls)
	}
	if gap := calls[1].Time.Sub(calls[0].Time); gap < 900*time.Millisecond {
		t.Fatalf("retried after %v, before Retry-After", gap)
	}
}

// When the stream expires mid-answer, the bot falls back to chat.update and
// posts, and no text is lost.
func TestStreamExpiryFallsBack(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	long := strings.Repeat("The first part of a careful answer. ", 30) + "THE END."
	r.model.Enqueue(fakemodel.Reply{Text: long, Chunks: 12, ChunkDelay: 60 * time.Millisecond})
	thread, _ := r.mention("explain", "")
	r.waitFor("the stream", func() bool { return len(r.slack.Streams()) == 1 && r.slack.Streams()[0].Appends > 0 })
	r.slack.ExpireStreams()
	r.waitFor("the answer", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "THE END.") && strings.Contains(text(m), "The first part") {
				return true
			}
		}
		return false
	})
}

// A stream refused at start falls back to a status message that becomes the
// answer.
func TestStreamRefusedFallsBack(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.slack.RefuseStartStream("not_allowed")
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}},
		fakemodel.Reply{Text: "Here is the whole answer."},
	)
	thread, _ := r.mention("go", "")
	r.waitFor("the answer", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "Here is the whole answer.") {
				return true
			}
		}
		return false
	})
	var sawStatus bool
	for _, m := range r.slack.Messages() {
		if strings.Contains(m.Text, "reading config.yaml") {
			sawStatus = true
		}
	}
	if !sawStatus {
		t.Fatal("no progress status message in the fallback")
	}
}

// A 25,000-character answer is split into markdown messages of at most
// 10,000 characters, never inside a code fence.
func TestLongAnswerSplit(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	var b strings.Builder
	for i := 0; b.Len() < 25000; i++ {
		if i%7 == 3 {
			b.WriteString("```go\nfunc example() {\n\treturn\n}\n```\n\n")
			continue
		}
		b.WriteString(strings.Repeat("A sentence of the long answer. ", 12) + "\n\n")
	}
	answer := strings.TrimSpace(b.String())
	r.model.Enqueue(fakemodel.Reply{Text: answer, Chunks: 20})
	thread, _ := r.mention("everything please", "")
	var pieces []fakeslack.Message
	r.waitFor("the split answer", func() bool {
		pieces = nil
		total := 0
		msgs := r.botMessages(thread)
		if len(msgs) < 2 {
			return false
		}
		for _, m := range msgs[1:] {
			if md := m.MarkdownText(); md != "" {
				pieces = append(pieces, m)
				total += len(md)
			}
		}
		return total >= len(answer)-200
	})
	if len(pieces) != 3 {
		t.Fatalf("answer went out in %d messages, want 3", len(pieces))
	}
	var joined []string
	for _, p := range pieces {
		md := p.MarkdownText()
		if n := len([]rune(md)); n > 10000 {
			t.Fatalf("piece of %d characters", n)
		}
		if strings.Count(md, "```")%2 != 0 {
			t.Fatalf("piece splits a code fence")
		}
		if p.Text == "" || len(p.Text) > 200 {
			t.Fatalf("fallback text = %q", p.Text)
		}
		joined = append(joined, md)
	}
	if strings.Join(strings.Fields(strings.Join(joined, "\n")), " ") != strings.Join(strings.Fields(answer), " ") {
		t.Fatal("the pieces do not add up to the answer")
	}
}

// A file shared in the thread is downloaded into the session's inputs and
// the agent can read it.
func TestAttachedFileReadable(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	f := r.slack.AddFile("notes.md", []byte("Customer quotes: reorder is painful."))
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/inputs/notes.md"})}},
		fakemodel.Reply{Text: "Read your notes."},
	)
	ts := r.slack.NextTS()
	r.slack.SendEvent(map[string]any{"type": "app_mention", "user": user, "channel": channel, "ts": ts,
		"text": "<@" + r.slack.BotUserID() + "> see attached", "files": []any{f}})
	r.waitFor("the answer", func() bool { return r.model.Calls() == 2 })
	reqs := r.model.Requests()
	has(t, reqs[0].LastUserText(), "/inputs/notes.md", "the agent is told about the file")
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	has(t, last.Content, "Customer quotes: reorder is painful.", "read_file result")

	// The file is kept in the store as well: a replica without it on its
	// disk (here: the inputs folder removed) restores it for the next turn.
	list, err := r.st.ListSessions(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v, %v", list, err)
	}
	id := list[0].ID
	if data, err := r.st.OutputData(ctx, id, transcript.InputPrefix+"notes.md", 0); err != nil || string(data) != "Customer quotes: reorder is painful." {
		t.Fatalf("stored shared file: %q, %v", data, err)
	}
	dir, err := r.st.InputDir(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/inputs/notes.md"})}},
		fakemodel.Reply{Text: "Read them again."},
	)
	r.reply("read my notes again", ts)
	r.waitFor("the second answer", func() bool { return r.model.Calls() == 4 })
	reqs = r.model.Requests()
	last = reqs[3].Messages[len(reqs[3].Messages)-1]
	has(t, last.Content, "Customer quotes: reorder is painful.", "read_file after the inputs folder was lost")
	if n := len(r.slack.Uploads()); n != 0 {
		t.Fatalf("a shared file was uploaded back: %d uploads", n)
	}
}

// A user outside the allowlist gets an ephemeral refusal that says why, and
// the model is never called.
func TestDeniedUserGetsEphemeralRefusal(t *testing.T) {
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.AllowedUsers = []string{"U0SOMEONEELSE"} }})
	thread, _ := r.mention("hi", "")
	r.waitFor("the refusal", func() bool {
		for _, m := range r.slack.Messages() {
			if m.Kind == fakeslack.KindEphemeral && m.User == user && strings.Contains(m.Text, "AGENTBOT_ALLOWED_USERS") {
				return true
			}
		}
		return false
	})
	time.Sleep(100 * time.Millisecond)
	if n := len(r.botMessages(thread)); n != 0 || r.model.Calls() != 0 {
		t.Fatalf("denied user got %d public messages and %d model calls", n, r.model.Calls())
	}
}

// The websocket drops: the bot reconnects by itself and keeps working.
func TestReconnectsAfterDrop(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	before := r.slack.TotalConnections()
	r.slack.DropConnections()
	r.waitFor("a new connection", func() bool {
		return r.slack.TotalConnections() > before && r.slack.Connected() == 1 && r.bot.Connected()
	})
	thread, _ := r.mention("", "")
	has(t, text(r.waitBotMessages(thread, 1)[0]), "Maren", "greeting after the reconnect")
}

// Direct messages work like channel threads: a DM starts a thread session
// (no mention needed), and tool progress also shows as the assistant
// thread status.
func TestDirectMessage(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	const dm = "D0DIRECT1"
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), dm, "product-lead")
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "config.yaml"})}},
		fakemodel.Reply{Text: "Hi from a DM."},
	)
	ts := r.slack.NextTS()
	r.slack.SendEvent(map[string]any{"type": "message", "user": user, "channel": dm, "channel_type": "im", "text": "hello, a question", "ts": ts})
	r.waitFor("the DM answer", func() bool {
		ss := r.slack.Streams()
		return len(ss) == 1 && ss[0].Stopped && strings.Contains(ss[0].Text, "Hi from a DM.")
	})
	s := r.slack.Streams()[0]
	if s.Channel != dm || s.ThreadTS != ts || s.RecipientUserID != "" {
		t.Fatalf("DM stream = %+v", s)
	}
	var sawStatus bool
	for _, st := range r.slack.Statuses() {
		if st.Channel == dm && strings.Contains(st.Status, "reading config.yaml") {
			sawStatus = true
		}
	}
	if !sawStatus {
		t.Fatalf("no assistant status in the DM: %+v", r.slack.Statuses())
	}
	// A reply in the DM thread continues the same session.
	r.model.Enqueue(fakemodel.Reply{Text: "Still here."})
	r.slack.SendEvent(map[string]any{"type": "message", "user": user, "channel": dm, "channel_type": "im", "text": "and now?", "ts": r.slack.NextTS(), "thread_ts": ts})
	r.waitFor("the second DM answer", func() bool { return len(r.slack.Streams()) == 2 && r.slack.Streams()[1].Stopped })
	if n := len(r.model.Requests()[2].Messages); n <= len(r.model.Requests()[1].Messages) {
		t.Fatal("the DM reply did not continue the session")
	}
}

// In a thread with several people, the agent is told who else is writing.
func TestOtherPeopleInTheThreadAreAttributed(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.slack.AddUser(slack.User{ID: "U0BOBBY", Name: "bobby", Profile: slack.UserProfile{DisplayName: "Bobby"}})
	r.model.Handle(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "noted"} })
	thread, _ := r.mention("we need a brief", "")
	r.waitFor("the first answer", func() bool { return r.model.Calls() == 1 })
	r.slack.SendEvent(map[string]any{"type": "message", "user": "U0BOBBY", "channel": channel, "channel_type": "channel",
		"text": "and it must ship by May", "ts": r.slack.NextTS(), "thread_ts": thread})
	r.waitFor("the second answer", func() bool { return r.model.Calls() == 2 })
	reqs := r.model.Requests()
	if first := reqs[0].LastUserText(); first != "we need a brief" {
		t.Fatalf("the starter's message = %q", first)
	}
	has(t, reqs[1].LastUserText(), "(Bobby, another person in this thread, writes:) and it must ship by May", "attribution")
}

// *help (typed or clicked) shows the menu again with its buttons, without a
// model call.
func TestHelpShowsMenuButtons(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	thread, _ := r.mention("", "")
	greet := r.waitBotMessages(thread, 1)[0]
	r.slack.SendBlockAction(fakeslack.BlockAction{UserID: user, ChannelID: channel, MessageTS: greet.TS, ThreadTS: thread, ActionID: "menu:0", Value: "*help"})
	msgs := r.waitBotMessages(thread, 2)
	if b := buttons(t, msgs[1]); b["menu:1"] != "*brief" || r.model.Calls() != 0 {
		t.Fatalf("help: buttons %v, model calls %d", b, r.model.Calls())
	}
}

// A failed model call is reported in the thread; the message stays in the
// session and "continue" picks it up.
func TestModelFailureReportedAndRecoverable(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Status: 400, ErrorBody: `{"error":{"message":"context too long","type":"invalid_request_error"}}`})
	thread, _ := r.mention("plan the launch", "")
	r.waitFor("the error", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "⚠️") && strings.Contains(text(m), "continue") {
				return true
			}
		}
		return false
	})
	r.model.Enqueue(fakemodel.Reply{Text: "Back on track."})
	r.reply("continue", thread)
	r.waitFor("the answer", func() bool { return r.model.Calls() == 2 })
	var users []string
	for _, m := range r.model.Requests()[1].Messages {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if n := len(users); n < 2 || users[n-2] != "plan the launch" || users[n-1] != "continue" {
		t.Fatalf("user messages after the failure = %q", users)
	}
}

// Saves of one document in one turn upload it once, with its final bytes;
// a save in a later turn is the next version.
func TestSavesInOneTurnUploadOnce(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "version one"})}},
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "version two"})}},
		fakemodel.Reply{Text: "Saved twice."},
	)
	thread, _ := r.mention("write it", "")
	r.waitFor("the answer", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(m.Text, "Saved twice.") {
				return true
			}
		}
		return false
	})
	ups := r.slack.Uploads()
	if len(ups) != 1 || string(ups[0].Content) != "version two" || ups[0].Title != "prd.md" {
		t.Fatalf("uploads after one turn = %+v; want one upload of the final bytes", ups)
	}
	// The next turn's save is the next version.
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": "prd.md", "content": "version three"})}},
		fakemodel.Reply{Text: "Saved again."},
	)
	r.reply("once more", thread)
	r.waitFor("the second upload", func() bool { return len(r.slack.Uploads()) == 2 })
	ups = r.slack.Uploads()
	if string(ups[1].Content) != "version three" || ups[1].Title != "prd.md, v2" {
		t.Fatalf("second upload = %q (%s)", ups[1].Content, ups[1].Title)
	}
}

// A shared file over the size cap is not taken; the user and the agent are
// told, and smaller files still arrive.
func TestSharedFileOverCap(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{mutate: func(c *bot.Config) { c.MaxUploadBytes = 100 }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	big := r.slack.AddFile("big.log", []byte(strings.Repeat("x", 500)))
	small := r.slack.AddFile("small.txt", []byte("tiny"))
	r.model.Enqueue(fakemodel.Reply{Text: "ok"})
	r.slack.SendEvent(map[string]any{"type": "app_mention", "user": user, "channel": channel, "ts": r.slack.NextTS(),
		"text": "<@" + r.slack.BotUserID() + "> logs", "files": []any{big, small}})
	r.waitFor("the model call", func() bool { return r.model.Calls() == 1 })
	in := r.model.Requests()[0].LastUserText()
	has(t, in, "/inputs/small.txt", "the small file is announced")
	has(t, in, "big.log", "the big file is named as not available")
	if strings.Contains(in, "/inputs/big.log") {
		t.Fatalf("the big file was taken: %q", in)
	}
	r.waitFor("the warning", func() bool {
		for _, m := range r.slack.Messages() {
			if strings.Contains(m.Text, "couldn't take big.log") {
				return true
			}
		}
		return false
	})
}

// A turn that runs out of time says so plainly.
func TestTurnTimeoutMessage(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{engine: func(c *engine.Config) { c.TurnTimeout = 300 * time.Millisecond }})
	storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "product-lead")
	r.model.Enqueue(fakemodel.Reply{Hang: true})
	thread, _ := r.mention("slow one", "")
	r.waitFor("the timeout message", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "took too long") {
				return true
			}
		}
		return false
	})
}
