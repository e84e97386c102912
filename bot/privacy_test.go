package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/bot/threadstate"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// The attack table of privacy (issue 26), end to end through the real
// socketmode client against a fake Slack that answers membership, privacy
// and org-wide team ids as Slack documents them: each test is one path a
// careful attacker tried, and fails without its fix.

const (
	alice = user       // starts the threads; an admin in projectRig
	bob   = "U0BOB"    // another person in the channel
	carol = "U0CAROL"  // off AGENTBOT_ALLOWED_USERS
	adm2  = "U0ADMIN2" // a workspace admin who is in none of the private channels
)

// mentionAs sends "@agentbot text" as who in ch (a new thread, or a reply
// in thread) and returns its ts.
func (r *rig) mentionAs(who, ch, text, thread string) string {
	ts := r.slack.NextTS()
	r.slack.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: who, Channel: ch,
		Text: "<@" + r.slack.BotUserID() + "> " + text, TimeStamp: ts, ThreadTimeStamp: thread})
	return ts
}

// replyAs sends a thread reply without a mention as who.
func (r *rig) replyAs(who, text, thread string) string {
	ts := r.slack.NextTS()
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: who, Channel: channel, ChannelType: "channel",
		Text: text, TimeStamp: ts, ThreadTimeStamp: thread})
	return ts
}

// saveIn has the agent of a new thread in ch, started by who, save a
// document, and waits for its upload.
func (r *rig) saveIn(who, ch, path, content string) string {
	r.t.Helper()
	r.model.Enqueue(saveCall(path, content), fakemodel.Reply{Text: "saved " + path})
	thread := r.mentionAs(who, ch, "save "+path, "")
	r.waitUpload(thread, path[strings.LastIndex(path, "/")+1:])
	return thread
}

// readIn has the agent of a new thread in ch read path, and returns the
// tool's result.
func (r *rig) readIn(ch, path string) string {
	r.t.Helper()
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{call("read_file", map[string]string{"path": path})}},
		fakemodel.Reply{Text: "read"})
	calls := r.model.Calls()
	r.mentionAs(alice, ch, "read "+path, "")
	r.waitCalls(calls + 2)
	return r.lastToolResult()
}

// binding is the project a channel of the fake's team is bound to.
func (r *rig) binding(ch string) string {
	ctx := context.Background()
	r.t.Helper()
	p, err := r.st.ChannelBinding(ctx, r.slack.TeamID()+"/"+ch)
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// bindRequest waits for the bot's request for a binding's approval in ch.
func (r *rig) bindRequest(ch string) fakeslack.Message {
	r.t.Helper()
	var request fakeslack.Message
	r.waitFor("the approval request in "+ch, func() bool {
		for _, m := range r.slack.Messages() {
			if m.Channel == ch && strings.Contains(m.Text, "asks to share this channel's documents") {
				request = m
				return true
			}
		}
		return false
	})
	return request
}

// clickBind clicks the Approve button of a binding request as who, with
// the button's value, or value when it is not "".
func (r *rig) clickBind(who string, request fakeslack.Message, value string) {
	r.t.Helper()
	for id, v := range buttons(r.t, request) {
		if strings.HasPrefix(id, "project-bind:") {
			if value != "" {
				v = value
			}
			env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: who, ChannelID: request.Channel, MessageTS: request.TS, ActionID: id, Value: v})
			if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
				r.t.Fatal(err)
			}
			return
		}
	}
	r.t.Fatalf("no approve button in %s", request.Blocks)
}

// lastEphemeral waits for a new ephemeral message to who and returns it.
func (r *rig) nextEphemeral(who string, before int) string {
	r.t.Helper()
	r.waitFor("an ephemeral answer to "+who, func() bool { return len(r.ephemerals(who)) > before })
	return fakeslack.Shown(r.ephemerals(who)[before].Text)
}

// 1. The allowlist covers the bind button, the Home tab and the pane:
// Carol, a member of the private channel but off AGENTBOT_ALLOWED_USERS,
// clicks Approve on a binding of its project, and opens both tabs.
func TestAttackAllowlistCoversBindAndHome(t *testing.T) {
	r := projectRigWith(t, func(c *bot.Config) { c.AllowedUsers = []string{alice} })
	r.slack.SetMembers("G0PRIV", carol)
	r.slack.SetMembers("C0PUB", carol, alice)
	has(t, r.slash(alice, "C0PUB", "project new checkout"), "now shares the project *checkout*", "project new")
	has(t, r.slash(alice, "G0PRIV", "project use checkout"), "asked this channel for the approval", "a private channel bound by a non-member")
	request := r.bindRequest("G0PRIV")
	before := len(r.ephemerals(carol))
	r.clickBind(carol, request, "")
	has(t, r.nextEphemeral(carol, before), "AGENTBOT_ALLOWED_USERS", "Carol's click")
	if p := r.binding("G0PRIV"); p != "" {
		t.Fatalf("Carol's click bound the private channel to %q", p)
	}

	publishes, posts := len(r.slack.CallsTo("views.publish")), len(r.slack.CallsTo("chat.postMessage"))
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": carol, "tab": "home"})
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": carol, "channel": "D0CAROL", "tab": "messages"})
	// Alice's Home tab, opened after Carol's, shows the events were handled.
	r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": alice, "tab": "home"})
	r.waitFor("Alice's home tab", func() bool { return lastHome(r, alice) != "" })
	if n := len(r.slack.CallsTo("views.publish")); n != publishes+1 || lastHome(r, carol) != "" {
		t.Fatalf("Carol got a Home tab: %d publishes after %d", n, publishes)
	}
	if n := len(r.slack.CallsTo("chat.postMessage")); n != posts {
		t.Fatalf("Carol's pane was greeted: %d posts after %d", n, posts)
	}
}

// 2. Documents outlive the binding: a private channel writes into
// project A and moves to project B; an admin who is not its member binds
// a public channel to A. A's documents came from the private channel, so
// the binding waits for a member's approval, and the document stays out
// of reach.
func TestAttackDocumentsOutliveTheBinding(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	team := r.slack.TeamID()
	for _, ch := range []string{"G0SEC", "C0PUB"} {
		if err := storage.SetChannelDefault(ctx, r.st, team, ch, "pm"); err != nil {
			t.Fatal(err)
		}
	}
	r.slack.SetMembers("G0SEC", alice)
	r.slack.AddUser(slack.User{ID: adm2, TeamID: team, IsAdmin: true, Name: "admin2"})
	has(t, r.slash(alice, "G0SEC", "project new alpha"), "now shares the project *alpha*", "project new alpha")
	r.saveIn(alice, "G0SEC", "sec2.md", "the private plan")
	has(t, r.slash(alice, "G0SEC", "project new beta"), "now shares the project *beta*", "project new beta")

	has(t, r.slash(adm2, "C0PUB", "project use alpha"), "asked this channel for the approval", "a non-member binding a public channel to alpha")
	if p := r.binding("C0PUB"); p != "" {
		t.Fatalf("the public channel was bound to %q without a member's approval", p)
	}
	hasNot(t, r.readIn("C0PUB", "/outputs/sec2.md"), "the private plan", "the public channel")
	// A member of the private channel approves: then it is shared.
	request := r.bindRequest("C0PUB")
	r.slack.SetMembers("C0PUB", alice, adm2)
	r.clickBind(alice, request, "")
	r.waitFor("the binding", func() bool { return r.binding("C0PUB") == "alpha" })
	has(t, r.readIn("C0PUB", "/outputs/sec2.md"), "the private plan", "after a member's approval")
}

// 3. Another workspace of the org: in an org-wide install, an admin of
// workspace 2 binds a channel there to a project of workspace 1's private
// channel. It is workspace 1's documents, so it waits for a member.
func TestAttackOrgWideOtherWorkspace(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	team := r.slack.TeamID()
	const team2, admW2, chW2 = "T0TEAM2", "U0W2ADMIN", "C0W2PUB"
	if err := storage.SetChannelDefault(ctx, r.st, team, "G0W1", "pm"); err != nil {
		t.Fatal(err)
	}
	r.slack.SetMembers("G0W1", alice)
	r.slack.SetMembers(chW2, admW2)
	r.slack.AddUser(slack.User{ID: admW2, TeamID: team2, IsAdmin: true, Name: "w2admin"})
	has(t, r.slash(alice, "G0W1", "project new alpha"), "now shares the project *alpha*", "project new alpha")
	r.saveIn(alice, "G0W1", "w1.md", "workspace one's plan")

	before := len(r.ephemerals(admW2))
	env := r.slack.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "project use alpha", UserID: admW2,
		ChannelID: chW2, TeamID: team2, EnterpriseID: "E0ORG", IsEnterpriseInstall: true})
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	answer := r.nextEphemeral(admW2, before)
	hasNot(t, answer, "now shares the project", "workspace 2's admin")
	p, err := r.st.ChannelBinding(ctx, team2+"/"+chW2)
	if err != nil || p != "" {
		t.Fatalf("workspace 2's channel bound to %q (%v)", p, err)
	}
}

// 4. Anyone can deny a waiting tool call: Bob writes in Alice's thread
// while her call waits. The call keeps waiting, Bob is told he is
// answered after, Alice's approval runs it, then Bob is answered. Alice's
// own new message supersedes a call, and the audit names her.
func TestAttackOthersMessageLeavesTheCallWaiting(t *testing.T) {
	r, _ := approvalRig(t, nil)
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{writeNote("call_a1")}}, fakemodel.Reply{Text: "Noted it."},
		fakemodel.Reply{Text: "Hello Bob."})
	thread, _ := r.mention("write a note", "")
	m := r.waitApprovals(thread, 1)[0]
	calls := r.model.Calls()
	r.replyAs(bob, "what is this note for?", thread)
	r.waitText(thread, "this thread waits for <@"+alice+">")
	if s := r.session(thread); len(s.Pending) != 1 || s.Pending[0].Decision != "" || r.model.Calls() != calls {
		t.Fatalf("Bob's message moved the thread: pending %+v, model calls %d → %d", s.Pending, calls, r.model.Calls())
	}
	r.click(alice, m, "approve")
	r.waitText(thread, "Noted it.")
	r.waitText(thread, "Hello Bob.")
	last := r.model.Requests()[r.model.Calls()-1].Messages
	has(t, last[len(last)-1].Content, "another person in this thread, writes:) what is this note for?", "Bob's message, answered after")
	if recs := r.audit(thread, "notes__write_note"); len(recs) != 1 || recs[0].Outcome != transcript.OutcomeOK || recs[0].Approver != alice {
		t.Fatalf("audit = %+v, want one call approved by Alice", recs)
	}
	r.waitFor("the deferred message to leave the thread state", func() bool {
		st, _ := threadstate.Of(r.session(thread))
		return len(st.Deferred) == 0
	})

	// Alice's own message supersedes the next call, in her name.
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{writeNote("call_a2")}})
	r.reply("write another note", thread)
	r.waitApprovals(thread, 2)
	r.waitFor("the call to wait", func() bool { return len(r.session(thread).Pending) == 1 })
	r.model.Enqueue(fakemodel.Reply{Text: "Moving on."})
	r.reply("never mind", thread)
	r.waitText(thread, "Moving on.")
	var denied []transcript.ToolRecord
	for _, rec := range r.audit(thread, "notes__write_note") {
		if rec.Outcome == transcript.OutcomeDenied {
			denied = append(denied, rec)
		}
	}
	if len(denied) != 1 || denied[0].Approver != alice {
		t.Fatalf("denied calls %+v, want one denied by Alice", denied)
	}
}

// 5. Whoever picks the agent takes the thread: Alice mentions the bot in
// a channel with no default agent, Bob clicks the picker and later types
// `use` in her thread. Alice stays the owner: Bob may not approve.
func TestAttackPickerDoesNotTakeTheThread(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, rigOpts{})
	thread, _ := r.mention("hello", "")
	var picker fakeslack.Message
	r.waitFor("the picker", func() bool {
		for _, m := range r.botMessages(thread) {
			if strings.Contains(string(m.Blocks), "pick:") {
				picker = m
				return true
			}
		}
		return false
	})
	env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: bob, ChannelID: channel, MessageTS: picker.TS, ThreadTS: thread,
		ActionID: "pick:product-lead", Value: "product-lead"})
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	owner := func() string {
		s, err := r.st.FindSession(ctx, r.sessionKey(thread))
		if err != nil || s == nil || s.AgentID == "" {
			return ""
		}
		st, _ := threadstate.Of(s)
		return st.Owner
	}
	r.waitFor("the agent picked", func() bool { return owner() != "" })
	if o := owner(); o != alice {
		t.Fatalf("after Bob's pick the owner is %s, want Alice (%s)", o, alice)
	}
	r.replyAs(bob, "use retro-coach", thread)
	r.waitFor("the switch", func() bool {
		s, _ := r.st.FindSession(ctx, r.sessionKey(thread))
		return s != nil && s.AgentID == "retro-coach"
	})
	if o := owner(); o != alice {
		t.Fatalf("after Bob's switch the owner is %s, want Alice", o)
	}
}

// 6. The Home tab follows membership: Alice, removed from a private
// channel, no longer sees its thread or documents on her Home tab.
func TestAttackHomeTabFollowsMembership(t *testing.T) {
	ctx := context.Background()
	r := projectRig(t)
	if err := storage.SetChannelDefault(ctx, r.st, r.slack.TeamID(), "G0PRIV", "pm"); err != nil {
		t.Fatal(err)
	}
	r.slack.SetMembers("G0PRIV", alice)
	r.saveIn(alice, "G0PRIV", "plan.md", "the private plan")
	open := func() string {
		n := len(r.slack.CallsTo("views.publish"))
		r.slack.SendEvent(map[string]any{"type": "app_home_opened", "user": alice, "tab": "home"})
		r.waitFor("the home tab", func() bool { return len(r.slack.CallsTo("views.publish")) > n })
		return lastHome(r, alice)
	}
	home := open()
	has(t, home, "plan.md", "the member's home tab")
	has(t, home, "G0PRIV", "the member's home tab")
	r.slack.RemoveMember("G0PRIV", alice)
	r.slack.SendEvent(map[string]any{"type": "member_left_channel", "user": alice, "channel": "G0PRIV", "channel_type": "G", "team": r.slack.TeamID()})
	// A refresh that began before she left (the one after the save) may
	// publish after this open; publishes land in the order of their reads,
	// so the tab ends without the channel.
	open()
	r.waitFor("the home tab without the channel she left", func() bool {
		home = lastHome(r, alice)
		return !strings.Contains(home, "plan.md") && !strings.Contains(home, "G0PRIV")
	})
	// /agent project in the channel she left answers no more either.
	has(t, r.slash(alice, "G0PRIV", "project"), "not a member", "/agent project after leaving")
}

// Forged bind buttons: a value naming another channel, and a button on a
// message the bot did not post, bind nothing.
func TestAttackForgedBindButtons(t *testing.T) {
	r := projectRig(t)
	r.slack.SetMembers("G0PRIV", "U0MEMBER")
	has(t, r.slash(alice, "C0PUB", "project new checkout"), "now shares the project", "project new")
	has(t, r.slash(alice, "G0PRIV", "project use checkout"), "asked this channel for the approval", "project use")
	request := r.bindRequest("G0PRIV")
	before := len(r.ephemerals("U0MEMBER"))
	r.clickBind("U0MEMBER", request, "checkout|G0OTHER")
	has(t, r.nextEphemeral("U0MEMBER", before), "doesn't belong", "a value for another channel")
	// A person's own message carrying a look-alike button.
	userMsg := r.slack.NextTS()
	r.slack.SendEvent(slackevents.MessageEvent{Type: "message", User: "U0MEMBER", Channel: "G0PRIV", ChannelType: "group", Text: "look", TimeStamp: userMsg})
	before = len(r.ephemerals("U0MEMBER"))
	env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: "U0MEMBER", ChannelID: "G0PRIV", MessageTS: userMsg,
		ActionID: "project-bind:checkout", Value: "checkout|G0PRIV"})
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	has(t, r.nextEphemeral("U0MEMBER", before), "doesn't belong", "a button on a person's message")
	if p := r.binding("G0PRIV"); p != "" {
		t.Fatalf("a forged button bound the channel to %q", p)
	}
}
