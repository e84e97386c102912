package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"agentbot/bot/fakeslack"
	"agentbot/engine/fakemodel"
	"agentbot/engine/transcript"
	"agentbot/storage"
	"agentbot/storage/bolt"
)

// writeMine writes a user bundle whose agent takes the id product-lead,
// the id of the shipped sample Maren, and returns its parent folder.
func writeMine(t *testing.T, parent string) string {
	t.Helper()
	writeBundle(t, parent, "mine", "type: standalone\nname: mine\nagent:\n  id: product-lead\n  name: Mine\n  file: agents/solo.md\n",
		map[string]string{"agents/solo.md": soloAgent, "config.yaml": "user_name: tester\n"})
	return parent
}

// storedAgent reads the session stored under key, with its agent snapshot.
func storedAgent(t *testing.T, data, key string) *transcript.Session {
	ctx := context.Background()
	t.Helper()
	st, err := bolt.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := storage.Session(ctx, st, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A session keeps the agent it started with when its id later names
// another agent: here the user adds a bundle whose agent takes the sample's
// id product-lead. chat --session still talks to Maren (her menu, her
// bundle), says that the id moved, and the stored session still holds her.
func TestChatSessionKeepsItsAgentAfterAnIDCollision(t *testing.T) {
	fm := fakemodel.NewTB(t)
	vars := chatVars(t, fm)
	t.Chdir(filepath.Dir(bundlesDir(t))) // the shipped samples are ./bundles
	vars["AGENTBOT_BUNDLES"] = "./bundles"
	fm.Enqueue(fakemodel.Reply{Text: "Hi."})
	r := runCmd(t, vars, "hello\n", "chat", "--agent", "product-lead", "--session", "keep")
	r.wantCode(t, 0)
	maren := storedAgent(t, vars["AGENTBOT_DATA"], "chat/keep").Agent
	if maren == nil || maren.Name != "Maren" || maren.Module != "product-team" {
		t.Fatalf("stored snapshot = %+v", maren)
	}

	user := writeMine(t, t.TempDir())
	vars["AGENTBOT_BUNDLES"] = "./bundles," + user
	a := parseAgentsJSON(t, runCmd(t, vars, "", "agents", "--json").stdout)
	names := map[string]string{}
	for _, x := range a.Agents {
		names[x.ID] = x.Name
	}
	if names["product-lead"] != "Mine" || names["product-team/product-lead"] != "Maren" {
		t.Fatalf("the collision did not happen: %v", names)
	}

	fm.Enqueue(fakemodel.Reply{Text: "Let's write the brief."})
	r = runCmd(t, vars, "*brief\n", "chat", "--session", "keep")
	r.wantCode(t, 0)
	contains(t, "stderr", r.stderr, "the id product-lead now names "+filepath.Join(user, "mine", "agents", "solo.md"))
	contains(t, "stdout", r.stdout, "Let's write the brief.")
	reqs := fm.Requests()
	if got := reqs[len(reqs)-1].LastUserText(); !strings.Contains(got, "picked menu item") {
		t.Errorf("*brief was not Maren's menu item: the request answers %q", got)
	}
	s := storedAgent(t, vars["AGENTBOT_DATA"], "chat/keep")
	if s.AgentID != "product-lead" || s.Agent.Name != "Maren" || s.Agent.Module != maren.Module || s.Agent.Source != maren.Source {
		t.Errorf("the stored session now holds %s (%+v), want Maren (%+v)", s.AgentID, s.Agent, maren)
	}
}

// The same in Slack: a reload that gives a thread's agent id to another
// agent does not re-point the thread; only new threads meet the id's new
// owner.
func TestServeReloadKeepsThreadsAgentAfterAnIDCollision(t *testing.T) {
	fs := fakeslack.New(t)
	fm := fakemodel.NewTB(t)
	user, data := t.TempDir(), t.TempDir()
	vars := map[string]string{
		"SLACK_API_URL": fs.APIURL(), "SLACK_BOT_TOKEN": fs.BotToken(), "SLACK_APP_TOKEN": fs.AppToken(),
		"OPENAI_BASE_URL": fm.URL(), "OPENAI_API_KEY": "k", "AGENTBOT_MODEL": "m",
		"AGENTBOT_DATA": data, "AGENTBOT_BUNDLES": user + "," + bundlesDir(t),
	}
	logs, stop := serveInProcess(t, vars)
	defer stop()
	opsWait(t, "serve to start", func() bool { return strings.Contains(logs.String(), "agentbot starting") && fs.Connected() == 1 })

	fs.SendSlashCommand(slack.SlashCommand{Command: "/agent", Text: "use product-lead", UserID: "U1", ChannelID: "C1", TeamID: fs.TeamID()})
	opsWait(t, "the default", func() bool { return len(fs.CallsTo("chat.postEphemeral")) == 1 })
	said := func(th string) []string {
		var out []string
		for _, m := range fs.ThreadMessages("C1", th) {
			if m.Kind != fakeslack.KindUser {
				out = append(out, m.Text+m.MarkdownText())
			}
		}
		return out
	}
	mention := func(thread string) string {
		ts := fs.NextTS()
		if thread == "" {
			thread = ts
		}
		fs.SendEvent(slackevents.AppMentionEvent{Type: "app_mention", User: "U1", Channel: "C1", TimeStamp: ts, ThreadTimeStamp: thread, Text: "<@" + fs.BotUserID() + ">"})
		return thread
	}
	thread := mention("")
	opsWait(t, "Maren's greeting", func() bool { return len(said(thread)) == 1 })
	if g := said(thread)[0]; !strings.Contains(g, "Maren") {
		t.Fatalf("first greeting %q", g)
	}

	writeMine(t, user)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	opsWait(t, "the reload", func() bool { return strings.Contains(logs.String(), "agents reloaded") })

	mention(thread)
	opsWait(t, "the thread's second greeting", func() bool { return len(said(thread)) == 2 })
	if g := said(thread)[1]; !strings.Contains(g, "Maren") || strings.Contains(g, "Mine") {
		t.Fatalf("the thread was re-pointed: its greeting after the reload is %q", g)
	}
	fresh := mention("")
	opsWait(t, "the new thread's greeting", func() bool { return len(said(fresh)) == 1 })
	if g := said(fresh)[0]; !strings.Contains(g, "Mine") {
		t.Fatalf("a new thread after the reload greets with %q, want the id's new owner", g)
	}
	stop()
	s := storedAgent(t, data, fs.TeamID()+"/C1/"+thread)
	if s.Agent == nil || s.Agent.Name != "Maren" || s.Agent.Module != "product-team" {
		t.Errorf("the stored thread session holds %+v", s.Agent)
	}
}
