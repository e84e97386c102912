package bot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"agentbot/bot"
	"agentbot/bot/fakeslack"
	"agentbot/bot/keys"
	"agentbot/engine"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
)

// Connect gates in the thread, with a stand-in for the MCP side: the
// tracker server's tool needs the person's own connection (as an identity
// user server does), and the linker makes links the test "finishes" by
// telling the bot, as the OAuth redirect does (engine/mcp/connect). The
// end-to-end run against a real protected server is in mcpauth_test.go.

// tracker is the stand-in: who is connected, the links made, and the
// people the tool's calls acted as.
type tracker struct {
	mu        sync.Mutex
	connected map[string]bool // team/user
	links     []linkMade
	actedAs   []string
}

type linkMade struct {
	team, user, server, thread string
	service                    bool
	url                        string
}

func newTracker() *tracker { return &tracker{connected: map[string]bool{}} }

func (tr *tracker) ConnectLink(_ context.Context, team, user, server, thread string, service bool) (string, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	u := fmt.Sprintf("https://auth.example/authorize?state=st-%d", len(tr.links)+1)
	tr.links = append(tr.links, linkMade{team, user, server, thread, service, u})
	return u, nil
}

func (tr *tracker) LinkTTL() time.Duration { return 10 * time.Minute }

func (tr *tracker) isConnected(team, user string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.connected[team+"/"+user]
}

func (tr *tracker) made() []linkMade {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]linkMade(nil), tr.links...)
}

func (tr *tracker) acted() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.actedAs...)
}

// tools is the engine's ExternalTools hook: tracker__create_issue, bound
// to the turn's person (team from the session key).
func (tr *tracker) tools(policy string) func(context.Context, *engine.Session, func(string)) []engine.ExternalTool {
	return func(_ context.Context, s *engine.Session, _ func(string)) []engine.ExternalTool {
		k, _ := keys.ParseThread(s.Key)
		team, person := k.Team, s.Person
		return []engine.ExternalTool{{
			Name: "tracker__create_issue", Server: "tracker", Description: "Create an issue as the person.",
			Schema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`), Policy: policy,
			NeedsConnection: func(context.Context) bool { return !tr.isConnected(team, person) },
			Call: func(_ context.Context, _ json.RawMessage, _ engine.ExternalCall) (engine.ExternalReply, error) {
				tr.mu.Lock()
				defer tr.mu.Unlock()
				if !tr.connected[team+"/"+person] {
					return engine.ExternalReply{Text: "401: not connected", IsError: true}, nil
				}
				tr.actedAs = append(tr.actedAs, person)
				return engine.ExternalReply{Text: "created issue #7 as " + person}, nil
			},
		}}
	}
}

// connectRig is a rig whose agent has tracker's tool and whose bot has
// its linker.
func connectRig(t *testing.T, policy string, mutate func(*bot.Config)) (*rig, *tracker) {
	t.Helper()
	tr := newTracker()
	r := newRig(t, rigOpts{
		engine: func(c *engine.Config) { c.ExternalTools = tr.tools(policy) },
		mutate: func(c *bot.Config) {
			c.Linker = tr
			c.MCPServers = []string{"tracker"}
			if mutate != nil {
				mutate(c)
			}
		},
	})
	if err := storage.SetChannelDefault(context.Background(), r.st, r.slack.TeamID(), channel, "product-lead"); err != nil {
		t.Fatal(err)
	}
	return r, tr
}

func createIssue(id string) fakemodel.ToolCall {
	return fakemodel.ToolCall{ID: id, Name: "tracker__create_issue", Arguments: `{"title":"Login fails"}`}
}

// connectNotes are the thread's notes about a connection.
func (r *rig) connectNotes(thread string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.botMessages(thread) {
		if strings.Contains(shown(m), "needs to connect their account") {
			out = append(out, m)
		}
	}
	return out
}

// linkEphemerals are the ephemeral messages who got with a connect link.
func (r *rig) linkEphemerals(who string) []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range r.ephemerals(who) {
		if strings.Contains(string(m.Blocks), "auth.example") {
			out = append(out, m)
		}
	}
	return out
}

// press presses the button of m whose action id starts with kind, as who.
func (r *rig) press(who string, m fakeslack.Message, kind string, ephemeral bool) {
	r.t.Helper()
	for id, v := range buttons(r.t, m) {
		if strings.HasPrefix(id, kind+":") {
			env := r.slack.SendBlockAction(fakeslack.BlockAction{UserID: who, ChannelID: channel, MessageTS: m.TS, ThreadTS: m.ThreadTS,
				ActionID: id, Value: v, IsEphemeral: ephemeral})
			if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
				r.t.Fatal(err)
			}
			return
		}
	}
	r.t.Fatalf("no %s button in %s", kind, m.Blocks)
}

// A's call waits for A to connect: the thread's note names her and holds
// no link; the link goes to her alone, bound to her team, user and the
// thread. Bob can neither get a link for her nor decline for her. Once
// she connects, the call runs as her and the turn finishes. Bob's call in
// the same thread then asks Bob, and runs as Bob once he connects.
func TestConnectGateAsksThePerson(t *testing.T) {
	r, tr := connectRig(t, engine.PolicyAuto, nil)
	r.slack.SetMembers(channel, alice, bob)
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{createIssue("call_c1")}}, fakemodel.Reply{Text: "Filed it as you."})
	thread, _ := r.mention("file the login bug", "")
	r.waitFor("the connect note", func() bool { return len(r.connectNotes(thread)) == 1 })
	note := r.connectNotes(thread)[0]
	has(t, shown(note), "<@"+alice+"> needs to connect their account at `tracker`", "the note")
	hasNot(t, shown(note), "auth.example", "the public note")
	r.waitFor("alice's link", func() bool { return len(r.linkEphemerals(alice)) == 1 })
	if len(r.linkEphemerals(bob)) != 0 {
		t.Fatal("bob got a link")
	}
	links := tr.made()
	if len(links) != 1 || links[0].team != r.slack.TeamID() || links[0].user != alice || links[0].server != "tracker" || links[0].service ||
		links[0].thread != r.sessionKey(thread) {
		t.Fatalf("links = %+v", links)
	}
	s := r.session(thread)
	if len(s.Pending) != 1 || s.Pending[0].Kind != transcript.GateConnect || s.Pending[0].Person != alice {
		t.Fatalf("pending = %+v", s.Pending)
	}
	calls := r.model.Calls()

	// Bob asks for a link on her note, and presses nothing else: refused.
	r.press(bob, note, "connect-link", false)
	r.waitFor("bob's refusal", func() bool {
		e := r.ephemerals(bob)
		return len(e) == 1 && strings.Contains(fakeslack.Shown(e[0].Text), "Only <@"+alice+"> can connect their own account")
	})
	if len(tr.made()) != 1 {
		t.Fatal("a link was made for bob's click")
	}
	// Bob replays alice's "Not now" (he saw none, but forges it): refused.
	r.press(bob, r.linkEphemerals(alice)[0], "connect-decline", true)
	r.waitFor("bob's second refusal", func() bool { return len(r.ephemerals(bob)) == 2 })
	// Approving past the gate is refused too, even for the owner.
	forged := fakeslack.BlockAction{UserID: alice, ChannelID: channel, MessageTS: note.TS, ThreadTS: thread, ActionID: "approve:x",
		Value: fmt.Sprintf(`{"k":%q,"c":"call_c1"}`, r.sessionKey(thread))}
	if _, err := r.slack.WaitAck(r.slack.SendBlockAction(forged), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the refused approval", func() bool {
		for _, e := range r.ephemerals(alice) {
			if strings.Contains(fakeslack.Shown(e.Text), "only they can") {
				return true
			}
		}
		return false
	})
	time.Sleep(150 * time.Millisecond) // time for a wrongly queued click to run
	if s := r.session(thread); s.Pending[0].Decision != "" || r.model.Calls() != calls || len(tr.acted()) != 0 {
		t.Fatalf("the gate opened without a connection: %+v", s.Pending)
	}

	// Her "send me the link again" gives a fresh link.
	r.press(alice, note, "connect-link", false)
	r.waitFor("alice's second link", func() bool { return len(r.linkEphemerals(alice)) == 2 })

	// She connects (the redirect finishes on some replica and tells the bot).
	tr.mu.Lock()
	tr.connected[r.slack.TeamID()+"/"+alice] = true
	tr.mu.Unlock()
	r.bot.AccountConnected(r.slack.TeamID(), alice, "tracker", r.sessionKey(thread))
	r.waitText(thread, "Filed it as you.")
	if got := tr.acted(); len(got) != 1 || got[0] != alice {
		t.Fatalf("the call acted as %v, want alice", got)
	}
	has(t, r.lastToolResult(), "created issue #7 as "+alice, "the result the model got")
	r.waitFor("the note to say connected", func() bool {
		cur, _ := r.slack.Message(channel, note.TS)
		return strings.Contains(shown(cur), "connected `tracker`") && len(buttons(t, cur)) == 0
	})

	// Bob's call in the same thread asks bob; alice's connection is never his.
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{createIssue("call_c2")}}, fakemodel.Reply{Text: "Filed it for Bob."})
	r.mentionAs(bob, channel, "file one for me too", thread)
	r.waitFor("bob's link", func() bool { return len(r.linkEphemerals(bob)) == 1 })
	if n := len(r.linkEphemerals(alice)); n != 2 {
		t.Fatalf("alice got %d links, want still 2", n)
	}
	if got := tr.acted(); len(got) != 1 {
		t.Fatalf("bob's call ran before he connected: %v", got)
	}
	tr.mu.Lock()
	tr.connected[r.slack.TeamID()+"/"+bob] = true
	tr.mu.Unlock()
	r.bot.AccountConnected(r.slack.TeamID(), bob, "tracker", "") // finished without the thread: found by its wait
	r.waitText(thread, "Filed it for Bob.")
	if got := tr.acted(); len(got) != 2 || got[1] != bob {
		t.Fatalf("calls acted as %v, want alice then bob", got)
	}
}

// "Not now": the call is not run, the model is told the person declined,
// and the turn goes on. A connection that comes later changes nothing.
func TestConnectGateDeclined(t *testing.T) {
	r, tr := connectRig(t, engine.PolicyAuto, nil)
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{createIssue("call_n1")}}, fakemodel.Reply{Text: "Going on without the tracker."})
	thread, _ := r.mention("file the login bug", "")
	r.waitFor("the link", func() bool { return len(r.linkEphemerals(user)) == 1 })
	r.press(user, r.linkEphemerals(user)[0], "connect-decline", true)
	r.waitText(thread, "Going on without the tracker.")
	has(t, r.lastToolResult(), "declined to connect their account at tracker", "the result the model got")
	recs := r.audit(thread, "tracker__create_issue")
	if len(recs) != 1 || recs[0].Outcome != transcript.OutcomeDenied || len(tr.acted()) != 0 {
		t.Fatalf("audit = %+v, acted = %v", recs, tr.acted())
	}
	calls := r.model.Calls()
	r.bot.AccountConnected(r.slack.TeamID(), user, "tracker", r.sessionKey(thread))
	time.Sleep(150 * time.Millisecond)
	if r.model.Calls() != calls || len(tr.acted()) != 0 {
		t.Fatal("a late connection ran the declined call")
	}
}

// A gate nobody answers expires like an approval: the model is told no
// account was connected in time.
func TestConnectGateExpires(t *testing.T) {
	r, _ := connectRig(t, engine.PolicyAuto, func(c *bot.Config) { c.ApprovalTimeout = 300 * time.Millisecond })
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{createIssue("call_x1")}}, fakemodel.Reply{Text: "No tracker then."})
	thread, _ := r.mention("file the login bug", "")
	r.waitText(thread, "No tracker then.")
	has(t, r.lastToolResult(), "no account at tracker was connected in time", "the result the model got")
	note := r.connectNotes(thread)[0]
	r.waitFor("the note to say it expired", func() bool {
		cur, _ := r.slack.Message(channel, note.TS)
		return strings.Contains(shown(cur), "was not connected in time")
	})
}

// A tool that asks for approval and needs a connection: the person
// connects first, then the call waits for approval as usual; the thread's
// owner approves, and the call still acts as the person who asked.
func TestConnectThenApprove(t *testing.T) {
	r, tr := connectRig(t, engine.PolicyAsk, nil)
	r.slack.SetMembers(channel, alice, bob)
	r.model.Enqueue(fakemodel.Reply{Text: "Ready when you are."})
	thread, _ := r.mention("we will file bugs here", "") // alice owns the thread
	r.waitText(thread, "Ready when you are.")
	r.model.Enqueue(fakemodel.Reply{ToolCalls: []fakemodel.ToolCall{createIssue("call_a1")}}, fakemodel.Reply{Text: "Filed as Bob."})
	r.mentionAs(bob, channel, "file it", thread)
	r.waitFor("bob's link", func() bool { return len(r.linkEphemerals(bob)) == 1 })
	tr.mu.Lock()
	tr.connected[r.slack.TeamID()+"/"+bob] = true
	tr.mu.Unlock()
	r.bot.AccountConnected(r.slack.TeamID(), bob, "tracker", r.sessionKey(thread))
	m := r.waitApprovals(thread, 1)[0]
	r.click(alice, m, "approve")
	r.waitText(thread, "Filed as Bob.")
	if got := tr.acted(); len(got) != 1 || got[0] != bob {
		t.Fatalf("the call acted as %v, want bob (who asked), not alice (who approved)", got)
	}
}

// /agent connect sends the person their own link; --service is for admins
// and makes a link for the service identity.
func TestSlashConnect(t *testing.T) {
	r, tr := connectRig(t, engine.PolicyAuto, func(c *bot.Config) { c.Admins = []string{alice} })
	r.slack.SetMembers(channel, alice, bob)
	before := len(r.ephemerals(bob))
	env := r.slack.SendSlashCommand(slashCmd(bob, "connect tracker"))
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	r.waitFor("bob's link", func() bool { return len(r.ephemerals(bob)) > before })
	links := tr.made()
	if len(links) != 1 || links[0].user != bob || links[0].service || links[0].thread != "" {
		t.Fatalf("links = %+v", links)
	}
	u, _ := url.Parse(links[0].url)
	has(t, string(r.ephemerals(bob)[before].Blocks), u.RawQuery, "bob's ephemeral")

	has(t, r.slash(bob, channel, "connect tracker --service"), "admin", "bob's refusal")
	if len(tr.made()) != 1 {
		t.Fatal("a service link was made for a non-admin")
	}
	before = len(r.ephemerals(alice))
	env = r.slack.SendSlashCommand(slashCmd(alice, "connect tracker --service"))
	if _, err := r.slack.WaitAck(env, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the service link", func() bool { return len(r.ephemerals(alice)) > before })
	has(t, shown(r.ephemerals(alice)[before]), "service identity", "the service link's message")
	if l := tr.made()[1]; !l.service || l.user != storage.ServiceUser {
		t.Fatalf("service link = %+v", l)
	}
	has(t, r.slash(alice, channel, "connect nope"), "no MCP server `nope`", "unknown server")
}

// slashCmd is "/agent text" from who in the test channel.
func slashCmd(who, text string) slack.SlashCommand {
	return slack.SlashCommand{Command: "/agent", Text: text, UserID: who, ChannelID: channel}
}
