package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/fixtures"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// projectRig is a rig on the 6.12 fixture whose threads share their
// channel's project (or the one it is bound to), wired as serve wires
// it; user is an admin.
func projectRig(t *testing.T) *rig {
	t.Helper()
	return projectRigWith(t, nil)
}

// projectRigWith is projectRig with more of the bot's config set by
// mutate (after user is made an admin).
func projectRigWith(t *testing.T, mutate func(*bot.Config)) *rig {
	t.Helper()
	return newRig(t, rigOpts{
		bmad: []string{fixtures.Copy(t, fixtures.V612)},
		engine: func(c *engine.Config) {
			st := c.Store.(*bolt.Store)
			c.Projects = &engine.Projects{Store: st,
				Of: func(ctx context.Context, key string) (string, error) {
					return storage.ThreadProject(ctx, st, key, storage.TerminalProject)
				},
				Root: storage.Folders{Dir: st.Dir()}.ProjectFolder}
		},
		mutate: func(c *bot.Config) {
			c.Admins = []string{user}
			if mutate != nil {
				mutate(c)
			}
		},
	})
}

// saveCall is a scripted save_output.
func saveCall(path, content string) fakemodel.Reply {
	return fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("save_output", map[string]string{"path": path, "content": content})}}
}

// waitUpload waits for a document's upload into a thread.
func (r *rig) waitUpload(thread, name string) {
	r.t.Helper()
	r.waitFor(name+" uploaded to its thread", func() bool {
		for _, u := range r.slack.Uploads() {
			if u.ThreadTS == thread && u.Filename == name {
				return true
			}
		}
		return false
	})
}

// waitCalls waits until the model has had n requests.
func (r *rig) waitCalls(n int) {
	r.t.Helper()
	r.waitFor(fmt.Sprintf("%d model calls", n), func() bool { return r.model.Calls() >= n })
}

// toolResults decodes the tool results a model request carried.
func toolResults(t *testing.T, req fakemodel.Request) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range req.Messages {
		if m.Role != "tool" {
			continue
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(m.Content), &res); err != nil {
			t.Fatalf("tool result is not JSON: %q", m.Content)
		}
		out = append(out, res)
	}
	return out
}

// The BMAD chain across four threads of one channel, through the real
// socketmode client: the analyst's brief, the PM who finds it with
// list_files and writes the PRD, the architect who reads the PRD, and
// bmad-help, which gets the three documents in what it loads. Each
// document is uploaded to the thread that changed it; /agent project and
// the Home tab list them newest first with version and author.
func TestProjectChainAcrossThreadsInSlack(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "analyst"); err != nil {
		t.Fatal(err)
	}
	r.model.Enqueue(saveCall("{planning_artifacts}/product-brief.md", "# Brief\nBikes checkout.\n"), fakemodel.Reply{Text: "The brief is saved."})
	t1, _ := r.mention("write the product brief", "")
	r.waitUpload(t1, "product-brief.md")

	t2, _ := r.mention("use pm", "")
	r.waitBotMessages(t2, 1)
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("list_files", map[string]string{"glob": "{planning_artifacts}/*.md"})}},
		saveCall("{planning_artifacts}/prd.md", "# PRD\nFrom the brief.\n"),
		fakemodel.Reply{Text: "The PRD is saved."})
	calls := r.model.Calls()
	r.reply("write the PRD from the brief", t2)
	r.waitUpload(t2, "prd.md")
	listed := toolResults(t, r.model.Requests()[calls+1])
	has(t, fmt.Sprint(listed[len(listed)-1]["files"]), "/outputs/planning-artifacts/product-brief.md", "the PM's list_files")

	t3, _ := r.mention("use architect", "")
	r.waitBotMessages(t3, 1)
	r.model.Enqueue(
		fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{planning_artifacts}/prd.md"})}},
		saveCall("{planning_artifacts}/architecture.md", "# Architecture\n"),
		fakemodel.Reply{Text: "The architecture is saved."})
	calls = r.model.Calls()
	r.reply("design it", t3)
	r.waitUpload(t3, "architecture.md")
	read := toolResults(t, r.model.Requests()[calls+1])
	has(t, fmt.Sprint(read[len(read)-1]["content"]), "From the brief.", "the architect reads the PRD")

	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("load_skill", map[string]string{"name": "bmad-help"})}},
		fakemodel.Reply{Text: "Next: epics and stories."})
	calls = r.model.Calls()
	r.mention("what's next?", "")
	r.waitCalls(calls + 2)
	var help map[string]any
	if err := json.Unmarshal([]byte(r.lastToolResult()), &help); err != nil {
		t.Fatal(err)
	}
	state := fmt.Sprint(help["project_documents"])
	// The author is named as Slack calls them (users.info), not by id.
	const userName = "user-u0user1"
	for _, want := range []string{"product-brief.md v1 " + userName + " with analyst", "prd.md v1 " + userName + " with pm",
		"architecture.md v1 " + userName + " with architect", "prd output of bmad-prd"} {
		has(t, state, want, "bmad-help's load")
	}
	// No other thread got these uploads.
	for _, u := range r.slack.Uploads() {
		want := map[string]string{"product-brief.md": t1, "prd.md": t2, "architecture.md": t3}[u.Filename]
		if want != "" && u.ThreadTS != want {
			t.Fatalf("%s uploaded to thread %s, want %s", u.Filename, u.ThreadTS, want)
		}
	}
	shown := r.slash(user, channel, "project")
	has(t, shown, "This channel is its own project. 3 documents", "/agent project")
	if a, p := strings.Index(shown, "architecture.md"), strings.Index(shown, "product-brief.md"); a < 0 || p < a {
		t.Fatalf("/agent project lists newest first:\n%s", shown)
	}
	r.waitFor("the Home tab lists the project's documents", func() bool {
		home := lastHome(r, user)
		return strings.Contains(home, "Project documents") && strings.Contains(home, "architecture.md") && strings.Contains(home, "v1")
	})
	// After a restart, a new thread still builds on the project.
	r.restart()
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{planning_artifacts}/architecture.md"})}},
		fakemodel.Reply{Text: "read"})
	calls = r.model.Calls()
	r.mention("read the architecture", "")
	r.waitCalls(calls + 2)
	has(t, r.lastToolResult(), "# Architecture", "a thread after the restart")
}

// The same chain in one thread: `use pm` keeps the thread's documents, and
// the PM hears who worked here before, what they produced and the
// question left open.
func TestProjectChainWithinOneThreadInSlack(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "analyst"); err != nil {
		t.Fatal(err)
	}
	r.model.Enqueue(saveCall("{planning_artifacts}/product-brief.md", "# Brief\n"), fakemodel.Reply{Text: "Saved. Who rides these bikes?"})
	thread, _ := r.mention("write the product brief", "")
	r.waitUpload(thread, "product-brief.md")
	r.reply("use pm", thread)
	r.waitFor("the PM's greeting", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(text(m), "John") {
				return true
			}
		}
		return false
	})
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "{planning_artifacts}/product-brief.md"})}},
		fakemodel.Reply{Text: "Read it."})
	calls := r.model.Calls()
	r.reply("read the brief", thread)
	r.waitCalls(calls + 2)
	has(t, r.lastToolResult(), "# Brief", "the PM reads the analyst's brief in the same thread")
	// Each answer says which agent speaks, streamed included.
	for _, who := range []string{"Mary, Business Analyst (analyst)", "John, Product Manager (pm)"} {
		r.waitFor(who+" under an answer", func() bool {
			for _, st := range r.slack.Streams() {
				if st.ThreadTS == thread && st.Stopped && strings.Contains(string(st.StopBlocks), who) {
					return true
				}
			}
			return false
		})
	}
	system := r.model.Requests()[calls].Messages[0].Content
	for _, want := range []string{"## Handoff", "Mary", "/outputs/planning-artifacts/product-brief.md (v1)", "Who rides these bikes?"} {
		has(t, system, want, "the PM's handoff")
	}
}

// Privacy: two people's DMs are two projects; a bound pair of channels
// shares one; a private channel is bound only with the approval of one of
// its members.
func TestProjectPrivacyInSlack(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	team := r.slack.TeamID()
	for _, ch := range []string{"D0ALICE", "D0BOB", "C0AAA", "C0BBB", "C0CCC", "G0PRIV"} {
		if err := storage.SetChannelDefault(ctx, r.st, team, ch, "pm"); err != nil {
			t.Fatal(err)
		}
	}
	dm := func(ch, who, text string) {
		t.Helper()
		r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: who, Channel: ch, ChannelType: "im", Text: text, TimeStamp: r.slack.NextTS()})
	}
	probe := func(post func(text string)) string {
		t.Helper()
		r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": "/outputs/secret.md"})}},
			fakemodel.Reply{Text: "done"})
		calls := r.model.Calls()
		post("read the secret")
		r.waitCalls(calls + 2)
		return r.lastToolResult()
	}
	r.model.Enqueue(saveCall("secret.md", "alice's secret"), fakemodel.Reply{Text: "saved"})
	calls := r.model.Calls()
	dm("D0ALICE", "U0ALICE", "save my secret")
	r.waitCalls(calls + 2)
	hasNot(t, probe(func(s string) { dm("D0BOB", "U0BOB", s) }), "alice's secret", "Bob's DM")
	has(t, probe(func(s string) { dm("D0ALICE", "U0ALICE", s) }), "alice's secret", "Alice's own DM")

	// A bound pair of public channels.
	has(t, r.slash(user, "C0AAA", "project new checkout"), "now shares the project *checkout*", "project new")
	has(t, r.slash(user, "C0BBB", "project use checkout"), "now shares the project *checkout*", "project use")
	mentionIn := func(ch string) func(string) {
		return func(s string) {
			r.slack.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: user, Channel: ch, Text: "<@" + r.slack.BotUserID() + "> " + s, TimeStamp: r.slack.NextTS()})
		}
	}
	r.model.Enqueue(saveCall("secret.md", "checkout plan"), fakemodel.Reply{Text: "saved"})
	calls = r.model.Calls()
	mentionIn("C0AAA")("save the plan")
	r.waitCalls(calls + 2)
	has(t, probe(mentionIn("C0BBB")), "checkout plan", "the bound channel")
	hasNot(t, probe(mentionIn("C0CCC")), "checkout plan", "an unbound channel")

	// A private channel: not without a member of every channel involved.
	// The admin is not one: the channel is asked, and only a member's
	// click binds it.
	has(t, r.slash(user, "G0PRIV", "project use checkout"), "asked this channel for the approval", "a private channel bound by a non-member")
	hasNot(t, probe(mentionIn("G0PRIV")), "checkout plan", "the private channel waiting for approval")
	var request fakeslack.Message
	r.waitFor("the approval request", func() bool {
		for _, m := range r.slack.Messages() {
			if m.Channel == "G0PRIV" && strings.Contains(m.Text, "asks to share this channel's documents") {
				request = m
				return true
			}
		}
		return false
	})
	clickBind := func(who string) {
		t.Helper()
		for id, v := range buttons(t, request) {
			if strings.HasPrefix(id, "project-bind:") {
				env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: who, ChannelID: "G0PRIV", MessageTS: request.TS, ActionID: id, Value: v})
				if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		t.Fatalf("no approve button in %s", request.Blocks)
	}
	// The private channel's consent is needed; the public ones' documents
	// are public already.
	r.slack.SetMembers("G0PRIV", "U0MEMBER")
	r.slack.SetMembers("C0AAA", "U0MEMBER", "U0OUT", user)
	r.slack.SetMembers("C0BBB", "U0OUT", user)
	clickBind("U0OUT") // in both public channels, not in the private one
	r.waitFor("the refusal of a non-member of the private channel", func() bool {
		for _, m := range r.ephemerals("U0OUT") {
			if strings.Contains(m.Text, "shared only with the approval of someone who is a member of every one") {
				return true
			}
		}
		return false
	})
	hasNot(t, probe(mentionIn("G0PRIV")), "checkout plan", "after a non-member's click")
	clickBind("U0MEMBER")
	r.waitFor("the approval", func() bool {
		for _, m := range r.slack.Messages() {
			if m.Channel == "G0PRIV" && m.TS == request.TS && strings.Contains(m.Text, "<@U0MEMBER> approved") {
				return true
			}
		}
		return false
	})
	has(t, probe(mentionIn("G0PRIV")), "checkout plan", "the approved private channel")
	// An admin who is a member of every channel binds a private one at once.
	r.slack.SetMembers("G0PRIV2", user)
	r.slack.SetMembers("G0PRIV", "U0MEMBER", user)
	has(t, r.slash(user, "G0PRIV2", "project use checkout"), "now shares the project", "a member of every channel binds it")
	// DMs are never bound, and only admins bind.
	has(t, r.slash("U0ALICE", "D0ALICE", "project use checkout"), "Only workspace admins", "a non-admin")
	has(t, r.slash("U0ALICE", "D0ALICE", "project"), "your own project, no one else's. 1 document,", "/agent project in a DM")
	r.slack.AddUser(slack.User{ID: "U0ADMIN2", IsAdmin: true, Name: "admin2"})
	has(t, r.slash("U0ADMIN2", "D0ADMIN2", "project use checkout"), "yours alone", "a DM")
}

// A first mention in a thread people already talk in reads the thread:
// their messages, with authors, reach the first request, within budget.
func TestMentionMidThreadReadsTheThread(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), channel, "pm"); err != nil {
		t.Fatal(err)
	}
	root := r.slack.NextTS()
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: "U0ANA", Channel: channel, ChannelType: "channel", Text: "We should let riders reorder their last bike part.", TimeStamp: root})
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: "U0BEN", Channel: channel, ChannelType: "channel", Text: "Agreed, and keep it to one tap.", TimeStamp: r.slack.NextTS(), ThreadTimeStamp: root})
	long := strings.Repeat("filler words ", 2000) // 26 KB: over the budget alone
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: "U0BEN", Channel: channel, ChannelType: "channel", Text: long, TimeStamp: r.slack.NextTS(), ThreadTimeStamp: root})
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: "U0ANA", Channel: channel, ChannelType: "channel", Text: "Last point: no login wall.", TimeStamp: r.slack.NextTS(), ThreadTimeStamp: root})
	r.model.Enqueue(fakemodel.Reply{Text: "Here is a PRD outline."})
	r.mention("write a PRD from this discussion", root)
	r.waitCalls(1)
	first := r.model.Requests()[0].Messages
	context := first[0].Content // with the agent's activation
	for _, want := range []string{"called into a Slack thread", "We should let riders reorder", "Last point: no login wall.", "<@U0ANA>", "<@U0BEN>", "Agreed, and keep it to one tap.", "(cut: "} {
		has(t, context, want, "the first request")
	}
	has(t, first[len(first)-1].Content, "write a PRD from this discussion", "the first request's message")
	hasNot(t, context, long, "the first request")
	if n := strings.Index(context, "called into a Slack thread"); len(context)-n > 16<<10 {
		t.Fatalf("the thread's context is %d bytes", len(context)-n)
	}
	// The next turn does not read the thread again.
	r.model.Enqueue(fakemodel.Reply{Text: "ok"})
	r.reply("thanks", root)
	r.waitCalls(2)
	if n := len(r.slack.CallsTo("conversations.replies")); n != 1 {
		t.Fatalf("conversations.replies called %d times", n)
	}
}
